import type { Migration } from '../../stores/database.ts';

/**
 * The snapshot diagnostics API's records (versions 600-699): the diagnostics sessions (digests of the
 * cookie value only) and the snapshots of each account with their processing outcome. The files of a
 * snapshot live in its folder under PORTOLAN_SNAPSHOT_DATA_DIR.
 */
export const SNAPSHOT_MIGRATIONS: readonly Migration[] = [
  {
    version: 600,
    name: 'diagnostics sessions',
    up: `CREATE TABLE diagnostics_sessions (
  token_hash TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  last_seen_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
CREATE INDEX diagnostics_sessions_expiry ON diagnostics_sessions (expires_at_ms);`,
  },
  {
    version: 601,
    name: 'snapshots and their processing outcome',
    up: `CREATE TABLE snapshots (
  id TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  file_name TEXT NOT NULL,
  file_size BIGINT NOT NULL,
  description TEXT NOT NULL,
  support_case TEXT NOT NULL,
  visible_in_gui BOOLEAN NOT NULL,
  status TEXT NOT NULL,
  messages TEXT NOT NULL,
  hostname TEXT NOT NULL,
  chassis_serial TEXT NOT NULL,
  platform TEXT NOT NULL,
  version TEXT NOT NULL,
  generation_date TEXT NOT NULL,
  uploaded_by TEXT NOT NULL,
  uploaded_at_ms BIGINT NOT NULL,
  rules_version TEXT,
  diagnostics TEXT,
  contents TEXT
);
CREATE INDEX snapshots_account ON snapshots (account, id);`,
  },
  {
    version: 602,
    // An upload streams to <data dir>/<id>/upload.tgz before its row exists, so its id is taken first,
    // from one counter shared by every process on the store (an UPDATE ... RETURNING is atomic on both
    // engines). Ids of uploads that were refused are simply never used.
    name: 'snapshot id counter',
    up: `CREATE TABLE snapshot_id_counter (
  name TEXT PRIMARY KEY,
  last_id BIGINT NOT NULL
);
INSERT INTO snapshot_id_counter (name, last_id) VALUES ('snapshots', 0);`,
  },
  {
    version: 603,
    // An upload in progress is a row from before its folder exists until its snapshot row replaces it (one
    // transaction), leased to the process receiving it and renewed while it runs: a start removes at once
    // the uploads of processes that are gone, and never one a live process on the same store is receiving.
    // Its reserved bytes count against the account's quota; snapshot_account_locks serialises the
    // reservations of one account (its row is locked first), so parallel uploads cannot together pass the
    // quota. stored_bytes: the unpacked size of a processed snapshot on disk (NULL until measured).
    name: 'snapshot uploads in progress and account quotas',
    up: `CREATE TABLE snapshot_uploads (
  id TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  owner TEXT NOT NULL,
  owner_machine TEXT NOT NULL,
  owner_pid INTEGER NOT NULL,
  reserved_bytes BIGINT NOT NULL,
  started_ms BIGINT NOT NULL,
  lease_expires_ms BIGINT NOT NULL
);
CREATE INDEX snapshot_uploads_account ON snapshot_uploads (account);
CREATE INDEX snapshot_uploads_lease ON snapshot_uploads (lease_expires_ms);
CREATE TABLE snapshot_account_locks (
  account TEXT PRIMARY KEY,
  taken BIGINT NOT NULL
);
ALTER TABLE snapshots ADD COLUMN stored_bytes BIGINT;`,
  },
];
