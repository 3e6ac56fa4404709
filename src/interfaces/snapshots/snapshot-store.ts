import type { DiagnosticOutput } from '../../../generated/snapshots/types.gen.ts';
import { toBoolean, type Database } from '../../stores/database.ts';

export type SnapshotStatus = 'PROCESSING' | 'COMPLETE' | 'ERROR';

/** A snapshot as the API shows it (without its diagnostics and content listing, read on their own). */
export type SnapshotRecord = {
  id: string;
  account: string;
  fileName: string;
  fileSize: number;
  description: string;
  supportCase: string;
  visibleInGui: boolean;
  status: SnapshotStatus;
  messages: string[];
  hostname: string;
  chassisSerial: string;
  platform: string;
  version: string;
  /** When the device took the snapshot (its manifest's `generatedAt`); '' until processed. */
  generationDate: string;
  uploadedBy: string;
  uploadedAtMs: number;
  /** The rule set version of the stored diagnostics; undefined until processed (and after a failure). */
  rulesVersion: string | undefined;
  /** When the snapshot expires, when it is not a year after its upload (the shared sample's: always ahead of the clock). */
  expiresAtMs?: number;
};

/** One file (`value`: its path in the snapshot) or command (`value`: the command line) of a snapshot. */
export type ContentEntry = { id: string; value: string };
/** What a processed snapshot holds: its files and its command outputs (each also one of the files). */
export type SnapshotContents = { files: ContentEntry[]; commands: ContentEntry[] };

/** What processing found in the manifest; all '' when it could not be read. */
export type DeviceFields = Pick<SnapshotRecord, 'hostname' | 'chassisSerial' | 'platform' | 'version' | 'generationDate'>;
export const NO_DEVICE: DeviceFields = Object.freeze({ hostname: '', chassisSerial: '', platform: '', version: '', generationDate: '' });

export type MetadataPatch = { description?: string; support_case?: string; visible_in_gui?: boolean };

/** The job queue of snapshot processing, and how its job ids name their snapshot (`snapshot-<id>-<unique>`). */
export const PROCESSING_QUEUE = 'snapshot-processing';
export const jobIdPrefix = (id: string) => `snapshot-${id}-`;

type RawSnapshot = {
  id: string;
  account: string;
  file_name: string;
  file_size: number | string;
  description: string;
  support_case: string;
  visible_in_gui: unknown;
  status: string;
  messages: string;
  hostname: string;
  chassis_serial: string;
  platform: string;
  version: string;
  generation_date: string;
  uploaded_by: string;
  uploaded_at_ms: number | string;
  rules_version: string | null;
};

const RECORD_COLUMNS =
  'id, account, file_name, file_size, description, support_case, visible_in_gui, status, messages, hostname, chassis_serial, platform, version, generation_date, uploaded_by, uploaded_at_ms, rules_version';
// Ids are increasing numbers kept as text: upload order is numeric order.
const UPLOAD_ORDER = 'ORDER BY LENGTH(id), id';

const recordOf = (row: RawSnapshot): SnapshotRecord => ({
  id: row.id,
  account: row.account,
  fileName: row.file_name,
  fileSize: Number(row.file_size),
  description: row.description,
  supportCase: row.support_case,
  visibleInGui: toBoolean(row.visible_in_gui),
  status: row.status as SnapshotStatus,
  messages: JSON.parse(row.messages) as string[],
  hostname: row.hostname,
  chassisSerial: row.chassis_serial,
  platform: row.platform,
  version: row.version,
  generationDate: row.generation_date,
  uploadedBy: row.uploaded_by,
  uploadedAtMs: Number(row.uploaded_at_ms),
  rulesVersion: row.rules_version ?? undefined,
});

/**
 * The snapshots of every account on the SQL port, written once for both engines. Every read and
 * change an API call makes names the account, so one account never sees another's snapshots; the
 * processing job (which has no account) uses the `*ById` functions. Each function takes the handle to
 * run on, so callers compose them in one transaction.
 */
export const snapshotStore = {
  /** Takes the next snapshot id (1, 2, ...), unique across every process on the store. */
  async nextId(db: Database): Promise<string> {
    const [row] = await db.query<{ last_id: string }>(
      "UPDATE snapshot_id_counter SET last_id = last_id + 1 WHERE name = 'snapshots' RETURNING CAST(last_id AS TEXT) AS last_id",
    );
    if (!row) throw new Error('The snapshot id counter is missing (migration 602 was not applied).');
    return row.last_id;
  },

  async insert(db: Database, record: SnapshotRecord): Promise<void> {
    await db.execute(
      `INSERT INTO snapshots (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [
        record.id,
        record.account,
        record.fileName,
        record.fileSize,
        record.description,
        record.supportCase,
        record.visibleInGui,
        record.status,
        JSON.stringify(record.messages),
        record.hostname,
        record.chassisSerial,
        record.platform,
        record.version,
        record.generationDate,
        record.uploadedBy,
        record.uploadedAtMs,
        record.rulesVersion ?? null,
      ],
    );
  },

  async get(db: Database, account: string, id: string): Promise<SnapshotRecord | undefined> {
    const [row] = await db.query<RawSnapshot>(`SELECT ${RECORD_COLUMNS} FROM snapshots WHERE account = $1 AND id = $2`, [account, id]);
    return row ? recordOf(row) : undefined;
  },

  async listIds(db: Database, account: string): Promise<string[]> {
    const rows = await db.query<{ id: string }>(`SELECT id FROM snapshots WHERE account = $1 ${UPLOAD_ORDER}`, [account]);
    return rows.map((r) => r.id);
  },

  /** The stored diagnostics (`all`) of a COMPLETE snapshot of the account. */
  async diagnostics(db: Database, account: string, id: string): Promise<DiagnosticOutput | undefined> {
    const [row] = await db.query<{ diagnostics: string | null }>(
      "SELECT diagnostics FROM snapshots WHERE account = $1 AND id = $2 AND status = 'COMPLETE'",
      [account, id],
    );
    return row?.diagnostics ? (JSON.parse(row.diagnostics) as DiagnosticOutput) : undefined;
  },

  /** The files and commands of a COMPLETE snapshot of the account. */
  async contents(db: Database, account: string, id: string): Promise<SnapshotContents | undefined> {
    const [row] = await db.query<{ contents: string | null }>(
      "SELECT contents FROM snapshots WHERE account = $1 AND id = $2 AND status = 'COMPLETE'",
      [account, id],
    );
    return row?.contents ? (JSON.parse(row.contents) as SnapshotContents) : undefined;
  },

  /** Sets the fields present in `patch`; false when the account has no such snapshot. */
  async updateMetadata(db: Database, account: string, id: string, patch: MetadataPatch): Promise<boolean> {
    const sets: string[] = [];
    const params: (string | boolean)[] = [account, id];
    const set = (column: string, value: string | boolean | undefined) => {
      if (value === undefined) return;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    set('description', patch.description);
    set('support_case', patch.support_case);
    set('visible_in_gui', patch.visible_in_gui);
    if (sets.length === 0) return (await snapshotStore.get(db, account, id)) !== undefined;
    const { rowCount } = await db.execute(`UPDATE snapshots SET ${sets.join(', ')} WHERE account = $1 AND id = $2`, params);
    return rowCount === 1;
  },

  /**
   * Deletes the account's snapshot and its processing job if that is still waiting (a running job finds
   * the row gone and cleans up after itself); false when there was no such snapshot.
   */
  async delete(db: Database, account: string, id: string): Promise<boolean> {
    const { rowCount } = await db.execute('DELETE FROM snapshots WHERE account = $1 AND id = $2', [account, id]);
    return rowCount > 0;
  },

  // ---- for the processing job: by id alone ----

  async getById(db: Database, id: string): Promise<SnapshotRecord | undefined> {
    const [row] = await db.query<RawSnapshot>(`SELECT ${RECORD_COLUMNS} FROM snapshots WHERE id = $1`, [id]);
    return row ? recordOf(row) : undefined;
  },

  /**
   * Records a processed snapshot with the measured size of its unpacked files (for the quota); false when it
   * is no longer PROCESSING (deleted, or finished by an earlier run).
   */
  async complete(
    db: Database,
    id: string,
    device: DeviceFields,
    output: DiagnosticOutput,
    contents: SnapshotContents,
    storedBytes: number,
  ): Promise<boolean> {
    const { rowCount } = await db.execute(
      `UPDATE snapshots SET status = 'COMPLETE', messages = '[]', hostname = $2, chassis_serial = $3, platform = $4, version = $5, generation_date = $6,
  rules_version = $7, diagnostics = $8, contents = $9, stored_bytes = $10 WHERE id = $1 AND status = 'PROCESSING'`,
      [
        id,
        device.hostname,
        device.chassisSerial,
        device.platform,
        device.version,
        device.generationDate,
        output.version,
        JSON.stringify(output),
        JSON.stringify(contents),
        storedBytes,
      ],
    );
    return rowCount === 1;
  },

  /** Records a failed processing with its messages; false when the snapshot is no longer PROCESSING. */
  async fail(db: Database, id: string, messages: readonly string[], device: DeviceFields = NO_DEVICE): Promise<boolean> {
    const { rowCount } = await db.execute(
      `UPDATE snapshots SET status = 'ERROR', messages = $2, hostname = $3, chassis_serial = $4, platform = $5, version = $6, generation_date = $7,
  rules_version = NULL, diagnostics = NULL, contents = NULL WHERE id = $1 AND status = 'PROCESSING'`,
      [id, JSON.stringify(messages), device.hostname, device.chassisSerial, device.platform, device.version, device.generationDate],
    );
    return rowCount === 1;
  },

  /** Replaces the diagnostics of a COMPLETE snapshot evaluated with another rule set. */
  async refresh(db: Database, id: string, output: DiagnosticOutput): Promise<boolean> {
    const { rowCount } = await db.execute(
      "UPDATE snapshots SET rules_version = $2, diagnostics = $3 WHERE id = $1 AND status = 'COMPLETE'",
      [id, output.version, JSON.stringify(output)],
    );
    return rowCount === 1;
  },

  // ---- disk use (quota): the unpacked size of a processed snapshot ----

  /** Records the measured size of a COMPLETE snapshot's files; false when it is not COMPLETE (deleted meanwhile). */
  async setStoredBytes(db: Database, id: string, bytes: number): Promise<boolean> {
    const { rowCount } = await db.execute("UPDATE snapshots SET stored_bytes = $2 WHERE id = $1 AND status = 'COMPLETE'", [id, bytes]);
    return rowCount === 1;
  },

  /** COMPLETE snapshots whose unpacked size was never measured (processed before migration 603). */
  async unmeasuredIds(db: Database): Promise<string[]> {
    const rows = await db.query<{ id: string }>(
      "SELECT id FROM snapshots WHERE status = 'COMPLETE' AND stored_bytes IS NULL ORDER BY LENGTH(id), id",
    );
    return rows.map((r) => r.id);
  },

  /** COMPLETE snapshots whose diagnostics come from another rule set version. */
  async staleIds(db: Database, rulesVersion: string): Promise<string[]> {
    const rows = await db.query<{ id: string }>(
      "SELECT id FROM snapshots WHERE status = 'COMPLETE' AND (rules_version IS NULL OR rules_version <> $1) ORDER BY LENGTH(id), id",
      [rulesVersion],
    );
    return rows.map((r) => r.id);
  },
};
