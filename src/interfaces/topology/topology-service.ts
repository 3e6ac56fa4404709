import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import { isDatabaseError } from '../../stores/database-error.ts';
import type { DeviceClient } from './device-client.ts';
import type { DeviceInventory } from './device-inventory.ts';
import { canonicalJson, KIND_LABEL, objectsOfRequest, tenantName, tenantOf, type Definition, type ObjectDef, type ObjectKind, type ObjectRef } from './topology-plan.ts';
import { topologyStore as store, type TaskRow } from './topology-store.ts';

/** A refusal the handlers answer as is: its status and the message of B's error body. */
export type Refusal = { status: 404 | 409 | 503; message: string };
export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

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

const refuse = (status: Refusal['status'], message: string): { ok: false; refusal: Refusal } => ({ ok: false, refusal: { status, message } });
const quote = (name: string) => `'${name}'`;

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
              return refuse(409, `${KIND_LABEL[object.kind]} ${quote(object.name)} already exists with a different definition; use another name or the same definition.`);
            }
            // Not reused while it may still go: its delete is under way, or the task that created it may fail and undo it.
            const label = `${KIND_LABEL[object.kind]} ${quote(object.name)}`;
            if (existing.deletingSinceMs !== undefined && clock.nowMs() - existing.deletingSinceMs < DELETE_MARK_MS) {
              return refuse(409, `${label} is being deleted; try again when the delete has ended.`);
            }
            const creator = await store.getTask(tx, existing.createdByTask);
            if (creator?.status === 'STARTED') return refuse(409, `${label} is being created by task ${creator.id}; try again when it has ended.`);
            continue;
          }
          await store.insertObject(tx, object, taskId, clock.nowMs());
          created.push({ kind: object.kind, name: object.name });
        }
        for (const ref of refs) await store.insertRef(tx, ref);
        const task: TaskRow = { id: taskId, topologyName, status: 'STARTED', targets: request.targetList.map((t) => ({ type: t.type, name: t.name })), created, startMs: clock.nowMs(), endMs: undefined, message: undefined };
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
    if (!task || task.status !== 'STARTED') return;
    const objects = await reachable(db, task.topologyName);
    if (!objects.some((o) => o.kind === 'topology')) return fail(task, `Topology ${quote(task.topologyName)} is no longer on the management system.`);
    const tenants = Object.fromEntries(objects.map(tenantOf));
    for (const target of task.targets) {
      const device = inventory.find(target.name);
      if (!device) return fail(task, `Deployment to ${target.name} failed: the device is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES).`);
      // Recorded before the call: whatever part of it reaches the device, a record says where to remove
      // it from (removing a tenant a device does not have is harmless, `no change`).
      await db.transaction(async (tx) => {
        for (const object of objects) await store.addDeployment(tx, object.kind, object.name, target.name);
      });
      const outcome = await devices.deployTenants(device, tenants, `sslo-${task.id}`, signal);
      signal.throwIfAborted();
      if (!outcome.ok) return fail(task, `Deployment to ${target.name} failed: ${outcome.message}`);
    }
    signal.throwIfAborted();
    const names = task.targets.map((t) => t.name).join(', ');
    await store.endTask(db, task.id, 'FINISHED', `Topology ${task.topologyName} deployed to ${names}.`, clock.nowMs());
  }

  /**
   * Ends a task FAILED and removes what it created, first from its devices, then from the records,
   * so the same request can be sent again. An object created by this task that another topology
   * has started to use meanwhile stays. Tenants a device could not remove are named in the message.
   */
  async function fail(task: TaskRow, reason: string): Promise<void> {
    const createdHere = new Set(task.created.map((c) => `${c.kind}\u0000${c.name}`));
    const removable: TaskRow['created'] = [];
    for (const object of task.created) {
      const users = await store.usersOf(db, object.kind, object.name);
      if (users.every((u) => createdHere.has(`${u.fromKind}\u0000${u.fromName}`))) removable.push(object);
    }
    const tenants = removable.map((o) => tenantName(o.kind, o.name));
    const left: string[] = [];
    for (const target of task.targets) {
      const device = inventory.find(target.name);
      const outcome = device ? await devices.removeTenants(device, tenants) : { ok: false as const, message: 'not in the inventory' };
      if (!outcome.ok && tenants.length > 0) left.push(`${target.name} (${tenants.join(', ')})`);
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

  /** Why an object cannot be deleted: the first object that still uses it. */
  function inUse(kind: ObjectKind, name: string, user: ObjectRef): string {
    const label = `${KIND_LABEL[kind]} ${quote(name)}`;
    const verb = kind === 'ssl' ? 'are' : 'is';
    if (user.fromKind === 'policy' && user.via !== '') return `${label} ${verb} used by rule ${quote(user.via)} of security policy ${quote(user.fromName)}.`;
    return `${label} ${verb} used by ${KIND_LABEL[user.fromKind].toLowerCase()} ${quote(user.fromName)}; delete the ${KIND_LABEL[user.fromKind].toLowerCase()} first.`;
  }

  /**
   * Deletes an object: refused while another object uses it (a topology: while its task runs); its
   * tenants leave every device first (a device that fails: 503, the records stay); then the records.
   * A topology takes the security policy created with it along, unless another topology uses that
   * policy (a policy another topology created and this one reused stays).
   */
  async function remove(kind: ObjectKind, name: string): Promise<Outcome<void>> {
    // Decided and marked in one transaction: a create that starts using the object meanwhile either
    // came first (the delete sees it: 409) or comes after (it sees the mark and does not reuse it).
    const decided = await db.transaction(async (tx): Promise<Outcome<{ kind: ObjectKind; name: string }[]>> => {
      if (!(await store.getObject(tx, kind, name))) return refuse(404, `${KIND_LABEL[kind]} ${quote(name)} was not found.`);
      const doomed: { kind: ObjectKind; name: string }[] = [{ kind, name }];
      if (kind === 'topology') {
        const task = await store.lastTaskOf(tx, name);
        if (task?.status === 'STARTED') return refuse(409, `Topology ${quote(name)} is being deployed by task ${task.id}; delete it when the task has ended.`);
        // The security policy created with this topology goes with it, unless another topology uses it.
        const policy = (await store.usesOf(tx, 'topology', name)).find((r) => r.toKind === 'policy');
        const owner = policy && (await store.getObject(tx, 'policy', policy.toName));
        const ownedHere = owner && (await store.getTask(tx, owner.createdByTask))?.topologyName === name;
        if (policy && ownedHere && (await store.usersOf(tx, 'policy', policy.toName)).every((u) => u.fromKind === 'topology' && u.fromName === name)) {
          doomed.push({ kind: 'policy', name: policy.toName });
        }
      } else {
        const user = (await store.usersOf(tx, kind, name))[0];
        if (user) return refuse(409, inUse(kind, name, user));
      }
      for (const object of doomed) await store.markDeleting(tx, object.kind, object.name, clock.nowMs());
      return { ok: true, value: doomed };
    });
    if (!decided.ok) return decided;
    const doomed = decided.value;
    // Off the devices first, device by device; what a device confirmed is no longer recorded there.
    const byDevice = new Map<string, { kind: ObjectKind; name: string }[]>();
    for (const object of doomed) {
      for (const device of await store.devicesOf(db, object.kind, object.name)) byDevice.set(device, [...(byDevice.get(device) ?? []), object]);
    }
    for (const [hostname, objects] of byDevice) {
      const device = inventory.find(hostname);
      const tenants = objects.map((o) => tenantName(o.kind, o.name));
      const outcome = device ? await devices.removeTenants(device, tenants) : { ok: false as const, message: 'the device is no longer in the inventory' };
      if (!outcome.ok) {
        await db.transaction(async (tx) => {
          for (const object of doomed) await store.markDeleting(tx, object.kind, object.name, undefined);
        });
        return refuse(503, `Device ${quote(hostname)} could not remove ${tenants.map(quote).join(', ')}: ${outcome.message}. ${KIND_LABEL[kind]} ${quote(name)} was not deleted; send the delete again.`);
      }
      await db.transaction(async (tx) => {
        for (const object of objects) await store.removeDeployment(tx, object.kind, object.name, hostname);
      });
    }
    await db.transaction(async (tx) => {
      for (const object of doomed) await store.deleteObject(tx, object.kind, object.name);
    });
    return { ok: true, value: undefined };
  }

  /** An object as stored, with the names of the objects that use it and the devices it is deployed to. */
  async function read(kind: ObjectKind, name: string): Promise<{ definition: Definition; usedBy: string[]; devices: string[] } | undefined> {
    const found = await store.getObject(db, kind, name);
    if (!found) return undefined;
    const users = await store.usersOf(db, kind, name);
    return { definition: found.definition, usedBy: [...new Set(users.map((u) => u.fromName))], devices: await store.devicesOf(db, kind, name) };
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
    remove,
    read,
    readTopology,
    task: (id: string) => store.getTask(db, id),
  };
}

export type TopologyService = ReturnType<typeof createTopologyService>;
