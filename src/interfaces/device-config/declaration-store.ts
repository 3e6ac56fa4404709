import type { Database } from '../../stores/database.ts';

/**
 * The saved configuration as JSON texts: the declaration's own members (`class`, `schemaVersion`,
 * `id`, ...) as one object, and each tenant's declaration. Texts, not objects: a declaration of
 * megabytes is parsed and written on the declaration checker's thread, never walked on the event loop.
 */
export type SavedDeclaration = { header: string | undefined; tenants: readonly [tenant: string, text: string][] };

/** A saved tenant change: its new declaration's JSON text, or null to remove it. */
export type TenantChange = { tenant: string; text: string | null };

/**
 * A task row with its request and its record as JSON texts (as they are stored and answered).
 * `order`: creation order (newest highest), unique within a process and increasing across restarts.
 */
export type StoredTask = { id: string; order: number; state: 'in progress' | 'done'; request: string; record: string };

/** A task row parsed (the diagnostic snapshot's deployment log reads the results). */
export type TaskRow = { id: string; order: number; state: 'in progress' | 'done'; request: unknown; record: unknown };

/**
 * The device's saved configuration (`persist: true`) and its deployment task records, on the SQL
 * port. A deployment is saved in one transaction, so a device stopped at any moment restarts with
 * each tenant wholly old or wholly new.
 */
export interface DeclarationStore {
  load(): Promise<SavedDeclaration>;
  /** Saves the header and the tenant changes together, and keeps the full declaration in the history (the last 16). */
  save(header: string, changes: readonly TenantChange[], full: string, atMs: number, historyId: string): Promise<void>;
  /** The text of the full declaration saved `age` deployments ago (0: the latest). */
  history(age: number): Promise<string | undefined>;
  /** A task first written `in progress` is a queued one (`?async=true`); one first written `done` ran synchronously. */
  putTask(task: StoredTask): Promise<void>;
  /**
   * Records a queued task's outcome, only while it is `in progress` (and, fenced, while this process is the
   * active one): false when it was finished already (by an earlier run), so a second run records nothing.
   */
  finishTask(id: string, record: string): Promise<boolean>;
  /** How many tasks are queued or running (`in progress`). */
  pendingTasks(): Promise<number>;
  getTask(id: string): Promise<StoredTask | undefined>;
  /** Newest first. */
  listTasks(limit: number): Promise<StoredTask[]>;
  /**
   * Keeps the newest `keep` finished records of queued tasks and, apart, the newest `keep` of the others (so
   * the newest `keep` of all are always kept); tasks not finished are kept whatever their number. A queued
   * task's record is its client's only way to its outcome: synchronous operations (answered with theirs
   * already, say a management system's deployments) never push it out.
   */
  pruneTasks(keep: number): Promise<void>;
}

const HISTORY = 16;

const toTask = (row: Record<string, unknown>): StoredTask => ({
  id: String(row.id),
  order: Number(row.created_order),
  state: row.state === 'done' ? 'done' : 'in progress',
  request: String(row.request),
  record: String(row.record),
});

/** A stored task parsed (small records only: the snapshot reads at most the service's last 100). */
export const parsedTask = (task: StoredTask): TaskRow => ({ ...task, request: JSON.parse(task.request), record: JSON.parse(task.record) });

/**
 * `fence`: called first inside the transaction of every write that acts for the active device (a
 * deployment's save, a queued task's outcome); it throws when this process no longer holds the active
 * lease (device-lease.ts fenceWrite), so the write is rolled back.
 */
export function createSqlDeclarationStore(db: Database, options: { fence?: (tx: Database) => Promise<void> } = {}): DeclarationStore {
  const fence = options.fence ?? (async () => undefined);
  return {
    async load() {
      const [headers, rows] = await Promise.all([
        db.query('SELECT header FROM device_declaration_header WHERE id = $1', ['current']),
        db.query('SELECT name, declaration FROM device_tenants ORDER BY name'),
      ]);
      return {
        header: headers[0] ? String(headers[0].header) : undefined,
        tenants: rows.map((row): [string, string] => [String(row.name), String(row.declaration)]),
      };
    },
    async save(header, changes, full, atMs, historyId) {
      await db.transaction(async (tx) => {
        await fence(tx);
        await tx.execute(
          `INSERT INTO device_declaration_header (id, header) VALUES ('current', $1) ON CONFLICT (id) DO UPDATE SET header = excluded.header`,
          [header],
        );
        for (const change of changes) {
          if (change.text === null) {
            await tx.execute('DELETE FROM device_tenants WHERE name = $1', [change.tenant]);
          } else {
            await tx.execute(
              'INSERT INTO device_tenants (name, declaration, saved_at_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET declaration = excluded.declaration, saved_at_ms = excluded.saved_at_ms',
              [change.tenant, change.text, atMs],
            );
          }
        }
        await tx.execute('INSERT INTO device_declaration_history (id, saved_at_ms, declaration) VALUES ($1, $2, $3)', [
          historyId,
          atMs,
          full,
        ]);
        await tx.execute(
          `DELETE FROM device_declaration_history WHERE id NOT IN (SELECT id FROM device_declaration_history ORDER BY saved_at_ms DESC, id DESC LIMIT ${HISTORY})`,
        );
      });
    },
    async history(age) {
      const rows = await db.query(
        `SELECT declaration FROM device_declaration_history ORDER BY saved_at_ms DESC, id DESC LIMIT 1 OFFSET ${Math.trunc(age)}`,
      );
      return rows[0] ? String(rows[0].declaration) : undefined;
    },
    async putTask(task) {
      await db.execute(
        `INSERT INTO device_deploy_tasks (id, created_order, state, request, record, queued) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record`,
        [task.id, task.order, task.state, task.request, task.record, task.state === 'in progress' ? 1 : 0],
      );
    },
    async finishTask(id, record) {
      return db.transaction(async (tx) => {
        await fence(tx);
        // The request goes: a finished task needs only its outcome (requests can be megabytes).
        const { rowCount } = await tx.execute(
          `UPDATE device_deploy_tasks SET state = 'done', record = $2, request = '{}' WHERE id = $1 AND state = 'in progress'`,
          [id, record],
        );
        return rowCount === 1;
      });
    },
    async pendingTasks() {
      const [row] = await db.query(`SELECT COUNT(*) AS pending FROM device_deploy_tasks WHERE state = 'in progress'`);
      return Number(row?.pending ?? 0);
    },
    async getTask(id) {
      const rows = await db.query('SELECT id, created_order, state, request, record FROM device_deploy_tasks WHERE id = $1', [id]);
      return rows[0] ? toTask(rows[0]) : undefined;
    },
    async listTasks(limit) {
      return (
        await db.query(
          `SELECT id, created_order, state, request, record FROM device_deploy_tasks ORDER BY created_order DESC, id DESC LIMIT ${Math.trunc(limit)}`,
        )
      ).map(toTask);
    },
    async pruneTasks(keep) {
      // Only finished records go: a queued task is never forgotten while it waits. Each kind keeps its newest.
      const newest = (queued: 0 | 1) =>
        `SELECT id FROM device_deploy_tasks WHERE state = 'done' AND queued = ${queued} ORDER BY created_order DESC, id DESC LIMIT ${Math.trunc(keep)}`;
      await db.execute(`DELETE FROM device_deploy_tasks WHERE state = 'done' AND id NOT IN (${newest(0)}) AND id NOT IN (${newest(1)})`);
    },
  };
}
