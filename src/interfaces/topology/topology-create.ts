import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import { ok } from '../../lib/errors.ts';
import type { Database } from '../../stores/database.ts';
import { isDatabaseError } from '../../stores/database-error.ts';
import { type Outcome, quote, refused } from './topology-outcome.ts';
import { canonicalJson, KIND_LABEL, type ObjectDef, objectsOfRequest } from './topology-plan.ts';
import { topologyStore as store, type TaskRow } from './topology-store.ts';

export type TopologyCreateOptions = {
  db: Database;
  clock: Clock;
  newTaskId: () => string;
  /** Queues the task's deployment inside the transaction that saves it (the job port). */
  enqueueDeployment: (tx: Database, taskId: string) => Promise<void>;
};

/** Why a create is refused: the name is taken, or an object it would reuse differs or may still go. */
export type CreateRefusal = 'objectExists' | 'objectBusy';

/** How long a delete's mark keeps creates from reusing an object (a delete cut off by a crash stops counting then). */
const DELETE_MARK_MS = 10 * 60 * 1000;

const topologyExists = (name: string) => refused('objectExists', `Topology ${quote(name)} already exists.`);

/**
 * Why an object of the request cannot be reused as stored (undefined: it can): a different
 * definition, or it may still go (its delete is under way, or the task that created it may fail and
 * undo it).
 */
async function reuseRefusal(
  tx: Database,
  object: ObjectDef,
  existing: NonNullable<Awaited<ReturnType<typeof store.getObject>>>,
  clock: Clock,
): Promise<Outcome<never, CreateRefusal> | undefined> {
  const label = `${KIND_LABEL[object.kind]} ${quote(object.name)}`;
  if (canonicalJson(existing.definition) !== canonicalJson(object.definition))
    return refused('objectExists', `${label} already exists with a different definition; use another name or the same definition.`);
  if (existing.deletingSinceMs !== undefined && clock.nowMs() - existing.deletingSinceMs < DELETE_MARK_MS)
    return refused('objectBusy', `${label} is being deleted; try again when the delete has ended.`);
  const creator = await store.getTask(tx, existing.createdByTask);
  if (creator?.status === 'STARTED')
    return refused('objectBusy', `${label} is being created by task ${creator.id}; try again when it has ended.`);
  return undefined;
}

/** Saves every object the store does not hold yet (an identical one is reused): the objects this task created, or why not. */
async function saveObjects(
  tx: Database,
  objects: readonly ObjectDef[],
  taskId: string,
  clock: Clock,
): Promise<Outcome<TaskRow['created'], CreateRefusal>> {
  const created: TaskRow['created'] = [];
  for (const object of objects) {
    const existing = await store.getObject(tx, object.kind, object.name);
    if (existing) {
      const refusal = await reuseRefusal(tx, object, existing, clock);
      if (refusal) return refusal;
      continue;
    }
    await store.insertObject(tx, object, taskId, clock.nowMs());
    created.push({ kind: object.kind, name: object.name });
  }
  return ok(created);
}

const newTask = (request: TopologyRequest, id: string, created: TaskRow['created'], nowMs: number): TaskRow => ({
  id,
  topologyName: request.template.TOPOLOGY.name,
  status: 'STARTED',
  targets: request.targetList.map((t) => ({ type: t.type, name: t.name })),
  created,
  startMs: nowMs,
  endMs: undefined,
  message: undefined,
});

/**
 * Saves the topology, every object it does not find identical, the references and the task, and
 * queues the deployment: all or nothing.
 */
export function createTopologyCreate(options: TopologyCreateOptions) {
  const { db, clock } = options;
  return async function create(request: TopologyRequest): Promise<Outcome<TaskRow, CreateRefusal>> {
    const { objects, refs } = objectsOfRequest(request);
    const topologyName = request.template.TOPOLOGY.name;
    const taskId = options.newTaskId();
    try {
      return await db.transaction(async (tx): Promise<Outcome<TaskRow, CreateRefusal>> => {
        if (await store.getObject(tx, 'topology', topologyName)) return topologyExists(topologyName);
        const saved = await saveObjects(tx, objects, taskId, clock);
        if (!saved.ok) return saved;
        for (const ref of refs) await store.insertRef(tx, ref);
        const task = newTask(request, taskId, saved.value, clock.nowMs());
        await store.insertTask(tx, task);
        await options.enqueueDeployment(tx, taskId);
        return ok(task);
      });
    } catch (error) {
      // Two creates of one name at once: the second one's insert meets the first one's row.
      if (isDatabaseError(error, 'unique-violation')) return topologyExists(topologyName);
      throw error;
    }
  };
}
