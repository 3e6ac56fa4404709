import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import { isDatabaseError } from '../../stores/database-error.ts';
import type { DeviceClient, DeviceOutcome } from './device-client.ts';
import type { DeviceInventory } from './device-inventory.ts';
import { createTopologyDelete } from './topology-delete.ts';
import {
  canonicalJson,
  KIND_LABEL,
  objectsOfRequest,
  tenantName,
  tenantOf,
  type Definition,
  type ObjectDef,
  type ObjectKey,
  type ObjectKind,
} from './topology-plan.ts';
import { quote, refuse, type Outcome } from './topology-outcome.ts';
import { topologyStore as store, type TaskRow } from './topology-store.ts';

export type TopologyServiceOptions = {
  db: Database;
  clock: Clock;
  logger: Logger;
  inventory: DeviceInventory;
  devices: DeviceClient;
  newTaskId: () => string;
  /** Queues the task's deployment inside the transaction that saves it (the job port). */
  enqueueDeployment: (tx: Database, taskId: string) => Promise<void>;
};

/** How long a delete's mark keeps creates from reusing an object (a delete cut off by a crash stops counting then). */
const DELETE_MARK_MS = 10 * 60 * 1000;

/**
 * The management system (B): creates topologies with their objects (reusing identical ones),
 * deploys them to the target devices as a durable task, reads and deletes them in an order that
 * keeps the devices and the records in step. Spec: specs/topology.yaml (info.description).
 */
export function createTopologyService(options: TopologyServiceOptions) {
  const { db, clock, logger, inventory, devices } = options;

  /** Saves the topology, every object it does not find identical, the references and the task, and queues the deployment: all or nothing. */
  async function create(request: TopologyRequest): Promise<Outcome<TaskRow>> {
    const { objects, refs } = objectsOfRequest(request);
    const topologyName = request.template.TOPOLOGY.name;
    const taskId = options.newTaskId();
    try {
      return await db.transaction(async (tx): Promise<Outcome<TaskRow>> => {
        const created: TaskRow['created'] = [];
        if (await store.getObject(tx, 'topology', topologyName)) return refuse(409, `Topology ${quote(topologyName)} already exists.`);
        for (const object of objects) {
          const existing = await store.getObject(tx, object.kind, object.name);
          if (existing) {
            if (canonicalJson(existing.definition) !== canonicalJson(object.definition)) {
              return refuse(
                409,
                `${KIND_LABEL[object.kind]} ${quote(object.name)} already exists with a different definition; use another name or the same definition.`,
              );
            }
            // Not reused while it may still go: its delete is under way, or the task that created it may fail and undo it.
            const label = `${KIND_LABEL[object.kind]} ${quote(object.name)}`;
            if (existing.deletingSinceMs !== undefined && clock.nowMs() - existing.deletingSinceMs < DELETE_MARK_MS) {
              return refuse(409, `${label} is being deleted; try again when the delete has ended.`);
            }
            const creator = await store.getTask(tx, existing.createdByTask);
            if (creator?.status === 'STARTED')
              return refuse(409, `${label} is being created by task ${creator.id}; try again when it has ended.`);
            continue;
          }
          await store.insertObject(tx, object, taskId, clock.nowMs());
          created.push({ kind: object.kind, name: object.name });
        }
        for (const ref of refs) await store.insertRef(tx, ref);
        const task: TaskRow = {
          id: taskId,
          topologyName,
          status: 'STARTED',
          targets: request.targetList.map((t) => ({ type: t.type, name: t.name })),
          created,
          startMs: clock.nowMs(),
          endMs: undefined,
          message: undefined,
        };
        await store.insertTask(tx, task);
        await options.enqueueDeployment(tx, taskId);
        return { ok: true, value: task };
      });
    } catch (error) {
      // Two creates of one name at once: the second one's insert meets the first one's row.
      if (isDatabaseError(error, 'unique-violation')) return refuse(409, `Topology ${quote(topologyName)} already exists.`);
      throw error;
    }
  }

  /** The topology and every object it reaches (its SSL settings, policy, the policy's chains, their services). */
  async function reachable(tx: Database, topologyName: string): Promise<ObjectDef[]> {
    const seen = new Map<string, ObjectDef>();
    const visit = async (kind: ObjectKind, name: string) => {
      const key = `${kind}\u0000${name}`;
      if (seen.has(key)) return;
      const found = await store.getObject(tx, kind, name);
      if (!found) return;
      seen.set(key, { kind, name, definition: found.definition });
      for (const ref of await store.usesOf(tx, kind, name)) await visit(ref.toKind, ref.toName);
    };
    await visit('topology', topologyName);
    return [...seen.values()];
  }

  /**
   * Runs a deployment task (the job's work; run again after a crash): deploys every object of the
   * topology to each target, one tenant per object, and records where it went; FINISHED once every
   * device confirmed. A device that fails ends the task FAILED, undoing what it created.
   */
  async function deploy(taskId: string, signal: AbortSignal): Promise<void> {
    const task = await store.getTask(db, taskId);
    if (task?.status !== 'STARTED') return;
    const objects = await reachable(db, task.topologyName);
    if (!objects.some((o) => o.kind === 'topology'))
      return fail(task, `Topology ${quote(task.topologyName)} is no longer on the management system.`);
    const tenants = Object.fromEntries(objects.map(tenantOf));
    // This run's own mark on its attempts: a run of the same task that a lost lease left going never settles ours.
    const run = `${task.id}:${options.newTaskId()}`;
    for (const target of task.targets) {
      const device = inventory.find(target.name);
      if (!device)
        return fail(task, `Deployment to ${target.name} failed: the device is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES).`);
      // Recorded before the call as "may be there": whatever part of it reaches the device, even if this
      // process dies before the answer, a record says where to remove it from. The answer settles it.
      await db.transaction(async (tx) => {
        for (const object of objects) await store.addAttempt(tx, run, object.kind, object.name, target.name);
      });
      const outcome = await devices.deployTenants(device, tenants, `sslo-${task.id}`, signal);
      await settleAttempts(run, target.name, objects, outcome);
      signal.throwIfAborted();
      if (!outcome.ok) return fail(task, `Deployment to ${target.name} failed: ${outcome.message}`);
    }
    signal.throwIfAborted();
    const names = task.targets.map((t) => t.name).join(', ');
    await store.endTask(db, task.id, 'FINISHED', `Topology ${task.topologyName} deployed to ${names}.`, clock.nowMs());
  }

  /**
   * What the device's answer says: the tenants it confirmed are recorded as there; when it says it
   * applied nothing more (or never got the request) the others' attempts go; when the answer was
   * lost they stay, as "may be there" (a delete removes them, a device without them answers `no change`).
   */
  async function settleAttempts(run: string, device: string, objects: readonly ObjectDef[], outcome: DeviceOutcome): Promise<void> {
    const arrived = (o: ObjectDef) => outcome.ok || outcome.confirmed.includes(tenantName(o.kind, o.name));
    const confirmed = objects.filter(arrived);
    const dropped = outcome.ok || outcome.others === 'unknown' ? [] : objects.filter((o) => !arrived(o));
    if (confirmed.length + dropped.length === 0) return;
    await db.transaction(async (tx) => {
      for (const o of confirmed) await store.confirmDeployment(tx, run, o.kind, o.name, device);
      for (const o of dropped) await store.dropAttempt(tx, run, o.kind, o.name, device);
    });
  }

  /**
   * Ends a task FAILED and removes what it created, first from the devices where it is or may be,
   * then from the records, so the same request can be sent again. An object created by this task that
   * another topology has started to use meanwhile stays. A device that nothing of the task reached is
   * neither asked nor named; tenants a device could not remove are named in the message.
   */
  async function fail(task: TaskRow, reason: string): Promise<void> {
    const createdHere = new Set(task.created.map((c) => `${c.kind}\u0000${c.name}`));
    const removable: ObjectKey[] = [];
    for (const object of task.created) {
      const users = await store.usersOf(db, object.kind, object.name);
      if (users.every((u) => createdHere.has(`${u.fromKind}\u0000${u.fromName}`))) removable.push(object);
    }
    const left: string[] = [];
    for (const [hostname, objects] of await store.placesOfEach(db, removable)) {
      const tenants = objects.map((o) => tenantName(o.kind, o.name));
      const device = inventory.find(hostname);
      const outcome: DeviceOutcome = device
        ? await devices.removeTenants(device, tenants)
        : { ok: false, message: 'not in the inventory', confirmed: [], others: 'unchanged' };
      const stay = outcome.ok ? [] : tenants.filter((tenant) => !outcome.confirmed.includes(tenant));
      if (stay.length > 0) left.push(`${hostname} (${stay.join(', ')})`);
    }
    const note = left.length > 0 ? ` Their removal could not be confirmed, so these tenants may still be on: ${left.join('; ')}.` : '';
    // One transaction: a crash cannot leave the records gone and the task still STARTED (or the other way round).
    const ended = await db.transaction(async (tx) => {
      for (const object of removable) await store.deleteObject(tx, object.kind, object.name);
      return store.endTask(tx, task.id, 'FAILED', `${reason}${note}`, clock.nowMs());
    });
    if (ended) logger.warn({ taskId: task.id, topology: task.topologyName }, 'topology deployment failed');
  }

  /** Ends a task the job port gave up on (it could not finish after its attempts). */
  async function giveUp(taskId: string, reason: string): Promise<void> {
    const task = await store.getTask(db, taskId);
    if (task?.status === 'STARTED') await fail(task, `The deployment could not complete: ${reason}.`);
  }

  /** An object as stored, with the names of the objects that use it and the devices it is (or may be) deployed to. */
  async function read(
    kind: ObjectKind,
    name: string,
  ): Promise<{ definition: Definition; usedBy: string[]; devices: string[]; unconfirmedDevices: string[] } | undefined> {
    const found = await store.getObject(db, kind, name);
    if (!found) return undefined;
    const users = await store.usersOf(db, kind, name);
    const places = await store.placesOf(db, kind, name);
    return {
      definition: found.definition,
      usedBy: [...new Set(users.map((u) => u.fromName))],
      devices: places.filter((p) => p.confirmed).map((p) => p.device),
      unconfirmedDevices: places.filter((p) => !p.confirmed).map((p) => p.device),
    };
  }

  /** A topology with the names of the chains and services it reaches and its last task. */
  async function readTopology(name: string) {
    const found = await read('topology', name);
    if (!found) return undefined;
    const objects = await reachable(db, name);
    const names = (kind: ObjectKind) => objects.filter((o) => o.kind === kind).map((o) => o.name);
    const task = await store.lastTaskOf(db, name);
    return { ...found, serviceChains: names('chain'), services: names('service'), lastTask: task };
  }

  return {
    create,
    deploy,
    giveUp,
    remove: createTopologyDelete({ db, clock, inventory, devices }),
    read,
    readTopology,
    task: (id: string) => store.getTask(db, id),
  };
}

export type TopologyService = ReturnType<typeof createTopologyService>;
