import type { Database } from '../../stores/database.ts';

/** A declaration's own fields (`class`, `schemaVersion`, `id`, `label`, ...): everything but its tenants. */
export type DeclarationHeader = Readonly<Record<string, unknown>>;

export type SavedDeclaration = { header: DeclarationHeader | undefined; tenants: ReadonlyMap<string, Readonly<Record<string, unknown>>> };

/** A saved tenant change: its new declaration, or null to remove it. */
export type TenantChange = { tenant: string; declaration: Readonly<Record<string, unknown>> | null };

/** `order`: creation order (newest highest), unique within a process and increasing across restarts. */
export type TaskRow = { id: string; order: number; state: 'in progress' | 'done'; request: unknown; record: unknown };

/**
 * The device's saved configuration (`persist: true`) and its deployment task records, on the SQL
 * port. A deployment is saved in one transaction, so a device stopped at any moment restarts with
 * each tenant wholly old or wholly new.
 */
export interface DeclarationStore {
  load(): Promise<SavedDeclaration>;
  /** Saves the header and the tenant changes together, and keeps the full declaration in the history (the last 16). */
  save(header: DeclarationHeader, changes: readonly TenantChange[], full: Readonly<Record<string, unknown>>, atMs: number, historyId: string): Promise<void>;
  /** The full declaration saved `age` deployments ago (0: the latest). */
  history(age: number): Promise<Readonly<Record<string, unknown>> | undefined>;
  putTask(task: TaskRow): Promise<void>;
  getTask(id: string): Promise<TaskRow | undefined>;
  /** Newest first. */
  listTasks(limit: number): Promise<TaskRow[]>;
  /** Keeps the newest `keep` finished task records (queued ones are kept whatever their number). */
  pruneTasks(keep: number): Promise<void>;
}

const HISTORY = 16;

const toTask = (row: Record<string, unknown>): TaskRow => ({
  id: String(row.id),
  order: Number(row.created_order),
  state: row.state === 'done' ? 'done' : 'in progress',
  request: JSON.parse(String(row.request)),
  record: JSON.parse(String(row.record)),
});

export function createSqlDeclarationStore(db: Database): DeclarationStore {
  return {
    async load() {
      const [headers, rows] = await Promise.all([
        db.query('SELECT header FROM device_declaration_header WHERE id = $1', ['current']),
        db.query('SELECT name, declaration FROM device_tenants ORDER BY name'),
      ]);
      return {
        header: headers[0] ? JSON.parse(String(headers[0].header)) : undefined,
        tenants: new Map(rows.map((row) => [String(row.name), JSON.parse(String(row.declaration))])),
      };
    },
    async save(header, changes, full, atMs, historyId) {
      await db.transaction(async (tx) => {
        await tx.execute(
          `INSERT INTO device_declaration_header (id, header) VALUES ('current', $1) ON CONFLICT (id) DO UPDATE SET header = excluded.header`,
          [JSON.stringify(header)],
        );
        for (const change of changes) {
          if (change.declaration === null) {
            await tx.execute('DELETE FROM device_tenants WHERE name = $1', [change.tenant]);
          } else {
            await tx.execute(
              'INSERT INTO device_tenants (name, declaration, saved_at_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET declaration = excluded.declaration, saved_at_ms = excluded.saved_at_ms',
              [change.tenant, JSON.stringify(change.declaration), atMs],
            );
          }
        }
        await tx.execute('INSERT INTO device_declaration_history (id, saved_at_ms, declaration) VALUES ($1, $2, $3)', [historyId, atMs, JSON.stringify(full)]);
        await tx.execute(
          `DELETE FROM device_declaration_history WHERE id NOT IN (SELECT id FROM device_declaration_history ORDER BY saved_at_ms DESC, id DESC LIMIT ${HISTORY})`,
        );
      });
    },
    async history(age) {
      const rows = await db.query(`SELECT declaration FROM device_declaration_history ORDER BY saved_at_ms DESC, id DESC LIMIT 1 OFFSET ${Math.trunc(age)}`);
      return rows[0] ? JSON.parse(String(rows[0].declaration)) : undefined;
    },
    async putTask(task) {
      await db.execute(
        `INSERT INTO device_deploy_tasks (id, created_order, state, request, record) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record`,
        [task.id, task.order, task.state, JSON.stringify(task.request), JSON.stringify(task.record)],
      );
    },
    async getTask(id) {
      const rows = await db.query('SELECT id, created_order, state, request, record FROM device_deploy_tasks WHERE id = $1', [id]);
      return rows[0] ? toTask(rows[0]) : undefined;
    },
    async listTasks(limit) {
      return (await db.query(`SELECT id, created_order, state, request, record FROM device_deploy_tasks ORDER BY created_order DESC, id DESC LIMIT ${Math.trunc(limit)}`)).map(toTask);
    },
    async pruneTasks(keep) {
      // Only finished records go: a queued task is never forgotten while it waits.
      await db.execute(
        `DELETE FROM device_deploy_tasks WHERE state = 'done' AND id NOT IN (SELECT id FROM device_deploy_tasks WHERE state = 'done' ORDER BY created_order DESC, id DESC LIMIT ${Math.trunc(keep)})`,
      );
    },
  };
}
