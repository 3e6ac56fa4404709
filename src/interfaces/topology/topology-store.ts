import type { Database } from '../../stores/database.ts';
import type { Definition, ObjectDef, ObjectKey, ObjectKind, ObjectRef } from './topology-plan.ts';

export type TaskStatus = 'STARTED' | 'FINISHED' | 'FAILED';
export type Target = { type: string; name: string };
export type TaskRow = {
  id: string;
  topologyName: string;
  status: TaskStatus;
  targets: Target[];
  /** The objects this task created (not the ones it reused): what a failure removes. */
  created: { kind: ObjectKind; name: string }[];
  startMs: number;
  endMs: number | undefined;
  message: string | undefined;
};

type RawTask = {
  id: string;
  topology_name: string;
  status: string;
  targets: string;
  created_objects: string;
  start_ms: number;
  end_ms: number | null;
  message: string | null;
};

const taskOf = (row: RawTask): TaskRow => ({
  id: row.id,
  topologyName: row.topology_name,
  status: row.status as TaskStatus,
  targets: JSON.parse(row.targets) as Target[],
  created: JSON.parse(row.created_objects) as TaskRow['created'],
  startMs: Number(row.start_ms),
  endMs: row.end_ms === null ? undefined : Number(row.end_ms),
  message: row.message ?? undefined,
});

/**
 * The management system's records on the SQL port. Every function takes the handle to run on, so a
 * caller composes them inside one transaction (`db.transaction((tx) => ...)`).
 */
export const topologyStore = {
  async getObject(
    db: Database,
    kind: ObjectKind,
    name: string,
  ): Promise<{ definition: Definition; createdByTask: string; deletingSinceMs: number | undefined } | undefined> {
    const rows = await db.query<{ definition: string; created_by_task: string; deleting_since_ms: number | null }>(
      'SELECT definition, created_by_task, deleting_since_ms FROM topology_objects WHERE kind = $1 AND name = $2',
      [kind, name],
    );
    const row = rows[0];
    return row
      ? {
          definition: JSON.parse(row.definition) as Definition,
          createdByTask: row.created_by_task,
          deletingSinceMs: row.deleting_since_ms === null ? undefined : Number(row.deleting_since_ms),
        }
      : undefined;
  },

  /** The names of every object of a kind, in no particular order (the reads sort them). */
  async namesOf(db: Database, kind: ObjectKind): Promise<string[]> {
    const rows = await db.query<{ name: string }>('SELECT name FROM topology_objects WHERE kind = $1', [kind]);
    return rows.map((r) => r.name);
  },

  /** Marks an object as being deleted (`sinceMs`), or clears the mark (undefined). */
  async markDeleting(db: Database, kind: ObjectKind, name: string, sinceMs: number | undefined): Promise<void> {
    await db.execute('UPDATE topology_objects SET deleting_since_ms = $3 WHERE kind = $1 AND name = $2', [kind, name, sinceMs ?? null]);
  },

  async insertObject(db: Database, object: ObjectDef, taskId: string, nowMs: number): Promise<void> {
    await db.execute('INSERT INTO topology_objects (kind, name, definition, created_by_task, created_at_ms) VALUES ($1, $2, $3, $4, $5)', [
      object.kind,
      object.name,
      JSON.stringify(object.definition),
      taskId,
      nowMs,
    ]);
  },

  /** Removes the object, what it uses (its references) and where it is (or may be) deployed. */
  async deleteObject(db: Database, kind: ObjectKind, name: string): Promise<void> {
    await db.execute('DELETE FROM topology_objects WHERE kind = $1 AND name = $2', [kind, name]);
    await db.execute('DELETE FROM topology_refs WHERE from_kind = $1 AND from_name = $2', [kind, name]);
    await db.execute('DELETE FROM topology_deployments WHERE kind = $1 AND name = $2', [kind, name]);
    await db.execute('DELETE FROM topology_deploy_attempts WHERE kind = $1 AND name = $2', [kind, name]);
  },

  async insertRef(db: Database, ref: ObjectRef): Promise<void> {
    await db.execute(
      'INSERT INTO topology_refs (from_kind, from_name, to_kind, to_name, via) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
      [ref.fromKind, ref.fromName, ref.toKind, ref.toName, ref.via],
    );
  },

  /** The objects that use this one. */
  async usersOf(db: Database, kind: ObjectKind, name: string): Promise<ObjectRef[]> {
    const rows = await db.query<{ from_kind: ObjectKind; from_name: string; via: string }>(
      'SELECT from_kind, from_name, via FROM topology_refs WHERE to_kind = $1 AND to_name = $2 ORDER BY from_kind, from_name, via',
      [kind, name],
    );
    return rows.map((r) => ({ fromKind: r.from_kind, fromName: r.from_name, toKind: kind, toName: name, via: r.via }));
  },

  /** The objects this one uses. */
  async usesOf(db: Database, kind: ObjectKind, name: string): Promise<ObjectRef[]> {
    const rows = await db.query<{ to_kind: ObjectKind; to_name: string; via: string }>(
      'SELECT to_kind, to_name, via FROM topology_refs WHERE from_kind = $1 AND from_name = $2 ORDER BY to_kind, to_name, via',
      [kind, name],
    );
    return rows.map((r) => ({ fromKind: kind, fromName: name, toKind: r.to_kind, toName: r.to_name, via: r.via }));
  },

  /** Before a task sends the object to the device: from now on it may be there (until the answer settles it). */
  async addAttempt(db: Database, taskId: string, kind: ObjectKind, name: string, device: string): Promise<void> {
    await db.execute('INSERT INTO topology_deploy_attempts (kind, name, device, task_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
      kind,
      name,
      device,
      taskId,
    ]);
  },

  /** The device confirmed it has the object (deployed, or `no change`): recorded as there, the task's attempt settled. */
  async confirmDeployment(db: Database, taskId: string, kind: ObjectKind, name: string, device: string): Promise<void> {
    await db.execute('INSERT INTO topology_deployments (kind, name, device) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      kind,
      name,
      device,
    ]);
    await db.execute('DELETE FROM topology_deploy_attempts WHERE kind = $1 AND name = $2 AND device = $3 AND task_id = $4', [
      kind,
      name,
      device,
      taskId,
    ]);
  },

  /** The task's attempt did not reach the device (or the device applied none of it): its record goes, another's stays. */
  async dropAttempt(db: Database, taskId: string, kind: ObjectKind, name: string, device: string): Promise<void> {
    await db.execute('DELETE FROM topology_deploy_attempts WHERE kind = $1 AND name = $2 AND device = $3 AND task_id = $4', [
      kind,
      name,
      device,
      taskId,
    ]);
  },

  /** The device confirmed the object is gone (removed, or it never had it): no record of it there remains. */
  async clearDevice(db: Database, kind: ObjectKind, name: string, device: string): Promise<void> {
    await db.execute('DELETE FROM topology_deployments WHERE kind = $1 AND name = $2 AND device = $3', [kind, name, device]);
    await db.execute('DELETE FROM topology_deploy_attempts WHERE kind = $1 AND name = $2 AND device = $3', [kind, name, device]);
  },

  /** The devices the object is on (`confirmed`) or may be on (an attempt whose answer was lost, or is still awaited). */
  async placesOf(db: Database, kind: ObjectKind, name: string): Promise<{ device: string; confirmed: boolean }[]> {
    const confirmed = await db.query<{ device: string }>(
      'SELECT device FROM topology_deployments WHERE kind = $1 AND name = $2 ORDER BY device',
      [kind, name],
    );
    const maybe = await db.query<{ device: string }>(
      'SELECT DISTINCT device FROM topology_deploy_attempts WHERE kind = $1 AND name = $2 ORDER BY device',
      [kind, name],
    );
    const there = new Set(confirmed.map((r) => r.device));
    return [
      ...confirmed.map((r) => ({ device: r.device, confirmed: true })),
      ...maybe.filter((r) => !there.has(r.device)).map((r) => ({ device: r.device, confirmed: false })),
    ];
  },

  /** The devices where any of these objects is or may be, each with those of the objects (in the order given). */
  async placesOfEach(db: Database, objects: readonly ObjectKey[]): Promise<Map<string, ObjectKey[]>> {
    const byDevice = new Map<string, ObjectKey[]>();
    for (const object of objects) {
      for (const { device } of await topologyStore.placesOf(db, object.kind, object.name))
        byDevice.set(device, [...(byDevice.get(device) ?? []), object]);
    }
    return byDevice;
  },

  async insertTask(db: Database, task: TaskRow): Promise<void> {
    await db.execute(
      'INSERT INTO topology_tasks (id, topology_name, status, targets, created_objects, start_ms, end_ms, message) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)',
      [task.id, task.topologyName, task.status, JSON.stringify(task.targets), JSON.stringify(task.created), task.startMs],
    );
  },

  async getTask(db: Database, id: string): Promise<TaskRow | undefined> {
    const rows = await db.query<RawTask>('SELECT * FROM topology_tasks WHERE id = $1', [id]);
    return rows[0] ? taskOf(rows[0]) : undefined;
  },

  async lastTaskOf(db: Database, topologyName: string): Promise<TaskRow | undefined> {
    const rows = await db.query<RawTask>('SELECT * FROM topology_tasks WHERE topology_name = $1 ORDER BY start_ms DESC, id DESC LIMIT 1', [
      topologyName,
    ]);
    return rows[0] ? taskOf(rows[0]) : undefined;
  },

  /** Ends a task that is still STARTED; false when it had already ended (a task ends once). */
  async endTask(db: Database, id: string, status: 'FINISHED' | 'FAILED', message: string, endMs: number): Promise<boolean> {
    const { rowCount } = await db.execute(
      "UPDATE topology_tasks SET status = $2, message = $3, end_ms = $4 WHERE id = $1 AND status = 'STARTED'",
      [id, status, message, endMs],
    );
    return rowCount === 1;
  },
};
