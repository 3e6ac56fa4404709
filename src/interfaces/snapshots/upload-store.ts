import type { Database } from '../../stores/database.ts';
import type { UploadOwner } from './upload-owner.ts';

/**
 * The uploads in progress and the disk use of each account, on the SQL port (both engines; table
 * `snapshot_uploads`, migration 603). An upload row exists from before its folder is made until the
 * snapshot row replaces it, in one transaction: so a folder is always explained by a row, and a start
 * finds every upload a stopped process left.
 *
 * Leases: the owner renews `lease_expires_ms` while it receives. A sweeper takes a lapsed (or gone)
 * owner's row by setting it to REMOVING, fenced by the exact value it read (a renewal in between wins),
 * then removes the folder, then the row; a sweeper stopped half-way leaves a REMOVING row the next one
 * finishes. Renewal and completion are fenced by owner and by not REMOVING.
 */
export const REMOVING = -1;

/** What an account holds: bytes (snapshots and reservations of uploads in progress) and snapshot rows plus uploads. */
export type AccountUsage = { bytes: number; snapshots: number };
export type UploadRow = { id: string; account: string; owner: string; owner_machine: string; owner_pid: number; lease_expires_ms: number };

/**
 * The bytes a snapshot holds on disk by its state: the archive while it waits or is processed, the
 * unpacked files once processed (measured; the archive size until then), nothing after a failure (its
 * folder is removed).
 */
const SNAPSHOT_BYTES = `CASE status WHEN 'PROCESSING' THEN file_size WHEN 'COMPLETE' THEN COALESCE(stored_bytes, file_size) ELSE 0 END`;
const USAGE = `SELECT
  (SELECT COALESCE(SUM(${SNAPSHOT_BYTES}), 0) FROM snapshots WHERE account = $1 AND id <> $2) AS snapshot_bytes,
  (SELECT COUNT(*) FROM snapshots WHERE account = $1) AS snapshot_count,
  (SELECT COALESCE(SUM(reserved_bytes), 0) FROM snapshot_uploads WHERE account = $1 AND id <> $2) AS upload_bytes,
  (SELECT COUNT(*) FROM snapshot_uploads WHERE account = $1) AS upload_count`;

type RawUsage = {
  snapshot_bytes: number | string;
  snapshot_count: number | string;
  upload_bytes: number | string;
  upload_count: number | string;
};

export const uploadStore = {
  /** The account's use, leaving out the bytes of snapshot or upload `except` (counted once whatever it is). */
  async usage(db: Database, account: string, except = ''): Promise<AccountUsage> {
    const [row] = await db.query<RawUsage>(USAGE, [account, except]);
    return {
      bytes: Number(row!.snapshot_bytes) + Number(row!.upload_bytes),
      snapshots: Number(row!.snapshot_count) + Number(row!.upload_count),
    };
  },

  /**
   * Locks the account's reservations until the transaction ends: every reservation of one account takes
   * this row first, so they run one after another on PostgreSQL too (and each reads what the one before
   * committed: run them read-committed). SQLite has one writer at a time anyway.
   */
  async lockAccount(tx: Database, account: string): Promise<void> {
    await tx.execute('INSERT INTO snapshot_account_locks (account, taken) VALUES ($1, 0) ON CONFLICT (account) DO NOTHING', [account]);
    await tx.execute('UPDATE snapshot_account_locks SET taken = taken + 1 WHERE account = $1', [account]);
  },

  async begin(
    tx: Database,
    row: { id: string; account: string; owner: UploadOwner; reservedBytes: number; nowMs: number; leaseMs: number },
  ): Promise<void> {
    await tx.execute(
      'INSERT INTO snapshot_uploads (id, account, owner, owner_machine, owner_pid, reserved_bytes, started_ms, lease_expires_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [row.id, row.account, row.owner.id, row.owner.machine, row.owner.pid, row.reservedBytes, row.nowMs, row.nowMs + row.leaseMs],
    );
  },

  /** Sets the upload's reservation; false when the upload is no longer this owner's (swept). */
  async reserve(tx: Database, id: string, owner: string, bytes: number): Promise<boolean> {
    const { rowCount } = await tx.execute(
      'UPDATE snapshot_uploads SET reserved_bytes = $3 WHERE id = $1 AND owner = $2 AND lease_expires_ms <> $4',
      [id, owner, bytes, REMOVING],
    );
    return rowCount === 1;
  },

  /** Renews the lease; false when the upload is no longer this owner's (a sweeper judged it gone). */
  async renew(db: Database, id: string, owner: string, leaseExpiresMs: number): Promise<boolean> {
    const { rowCount } = await db.execute(
      'UPDATE snapshot_uploads SET lease_expires_ms = $3 WHERE id = $1 AND owner = $2 AND lease_expires_ms <> $4',
      [id, owner, leaseExpiresMs, REMOVING],
    );
    return rowCount === 1;
  },

  /** Ends the upload's row (it became a snapshot, or was refused); false when it was no longer this owner's. */
  async end(tx: Database, id: string, owner: string): Promise<boolean> {
    const { rowCount } = await tx.execute('DELETE FROM snapshot_uploads WHERE id = $1 AND owner = $2 AND lease_expires_ms <> $3', [
      id,
      owner,
      REMOVING,
    ]);
    return rowCount === 1;
  },

  /** Uploads whose lease lapsed by `nowMs`, or that a sweeper began removing, and those of other owners (for a liveness check). */
  async candidates(db: Database, ownOwner: string): Promise<UploadRow[]> {
    const rows = await db.query<UploadRow>(
      'SELECT id, account, owner, owner_machine, owner_pid, lease_expires_ms FROM snapshot_uploads WHERE owner <> $1 ORDER BY started_ms',
      [ownOwner],
    );
    return rows.map((r) => ({ ...r, owner_pid: Number(r.owner_pid), lease_expires_ms: Number(r.lease_expires_ms) }));
  },

  /** Takes an upload for removal, fenced by the lease value read; false when its owner renewed it meanwhile. */
  async claimForRemoval(db: Database, row: Pick<UploadRow, 'id' | 'owner' | 'lease_expires_ms'>): Promise<boolean> {
    const { rowCount } = await db.execute(
      'UPDATE snapshot_uploads SET lease_expires_ms = $3 WHERE id = $1 AND owner = $2 AND lease_expires_ms = $4',
      [row.id, row.owner, REMOVING, row.lease_expires_ms],
    );
    return rowCount === 1;
  },

  async removeClaimed(db: Database, id: string): Promise<void> {
    await db.execute('DELETE FROM snapshot_uploads WHERE id = $1 AND lease_expires_ms = $2', [id, REMOVING]);
  },

  /** The ids a row explains the folder of (a snapshot, or an upload in progress), in one query; folders of others are row-less. */
  async knownIds(db: Database): Promise<Set<string>> {
    const rows = await db.query<{ id: string }>('SELECT id FROM snapshots UNION SELECT id FROM snapshot_uploads');
    return new Set(rows.map((row) => row.id));
  },
};
