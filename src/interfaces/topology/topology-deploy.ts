import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import type { DeviceClient, DeviceOutcome } from './device-client.ts';
import type { DeviceInventory, ManagedDevice } from './device-inventory.ts';
import { quote } from './topology-outcome.ts';
import { type ObjectDef, type ObjectKey, tenantName, tenantOf } from './topology-plan.ts';
import { reachable } from './topology-reads.ts';
import { topologyStore as store, type TaskRow } from './topology-store.ts';

export type TopologyDeployOptions = {
  db: Database;
  clock: Clock;
  logger: Logger;
  inventory: DeviceInventory;
  devices: DeviceClient;
  /** Marks each run of a task (a run that a lost lease left going never settles another's attempts). */
  newRunId: () => string;
};

/** A device no longer in the inventory is not asked: it removed nothing, and its tenants are named as maybe still there. */
const NOT_IN_INVENTORY: DeviceOutcome = { ok: false, message: 'not in the inventory', confirmed: [], others: 'unchanged' };

/**
 * The deployment task runner (the job's work; run again after a crash): deploys every object of the
 * topology to each target, one tenant per object, and records where it went; FINISHED once every
 * device confirmed. A device that fails ends the task FAILED, undoing what it created.
 */
export function createDeployRunner(options: TopologyDeployOptions) {
  const { db, clock, logger, inventory, devices } = options;

  async function deploy(taskId: string, signal: AbortSignal): Promise<void> {
    const task = await store.getTask(db, taskId);
    if (task?.status !== 'STARTED') return;
    const objects = await reachable(db, task.topologyName);
    if (!objects.some((o) => o.kind === 'topology'))
      return failTask(task, `Topology ${quote(task.topologyName)} is no longer on the management system.`);
    const run = `${task.id}:${options.newRunId()}`;
    for (const target of task.targets) {
      const device = inventory.find(target.name);
      if (!device)
        return failTask(task, `Deployment to ${target.name} failed: the device is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES).`);
      const outcome = await deployTo(device, task, run, objects, signal);
      signal.throwIfAborted();
      if (!outcome.ok) return failTask(task, `Deployment to ${target.name} failed: ${outcome.message}`);
    }
    signal.throwIfAborted();
    const names = task.targets.map((t) => t.name).join(', ');
    await store.endTask(db, task.id, 'FINISHED', `Topology ${task.topologyName} deployed to ${names}.`, clock.nowMs());
  }

  /** One target: its tenants sent, and what it answered recorded. */
  async function deployTo(
    device: ManagedDevice,
    task: TaskRow,
    run: string,
    objects: readonly ObjectDef[],
    signal: AbortSignal,
  ): Promise<DeviceOutcome> {
    // Recorded before the call as "may be there": whatever part of it reaches the device, even if this
    // process dies before the answer, a record says where to remove it from. The answer settles it.
    await db.transaction(async (tx) => {
      for (const object of objects) await store.addAttempt(tx, run, object.kind, object.name, device.hostname);
    });
    const outcome = await devices.deployTenants(device, Object.fromEntries(objects.map(tenantOf)), `sslo-${task.id}`, signal);
    await settleAttempts(run, device.hostname, objects, outcome);
    return outcome;
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
   * then from the records, so the same request can be sent again. A device that nothing of the task
   * reached is neither asked nor named; tenants a device could not remove are named in the message.
   */
  async function failTask(task: TaskRow, reason: string): Promise<void> {
    const removable = await removableOf(task);
    const left = await removeFromDevices(removable);
    const note = left.length > 0 ? ` Their removal could not be confirmed, so these tenants may still be on: ${left.join('; ')}.` : '';
    // One transaction: a crash cannot leave the records gone and the task still STARTED (or the other way round).
    const ended = await db.transaction(async (tx) => {
      for (const object of removable) await store.deleteObject(tx, object.kind, object.name);
      return store.endTask(tx, task.id, 'FAILED', `${reason}${note}`, clock.nowMs());
    });
    if (ended) logger.warn({ taskId: task.id, topology: task.topologyName }, 'topology deployment failed');
  }

  /** The objects the task created that only objects it created use (one another topology started to use meanwhile stays). */
  async function removableOf(task: TaskRow): Promise<ObjectKey[]> {
    const createdHere = new Set(task.created.map((c) => `${c.kind}\u0000${c.name}`));
    const removable: ObjectKey[] = [];
    for (const object of task.created) {
      const users = await store.usersOf(db, object.kind, object.name);
      if (users.every((u) => createdHere.has(`${u.fromKind}\u0000${u.fromName}`))) removable.push(object);
    }
    return removable;
  }

  /** Asks each device where the objects are (or may be) to remove their tenants: `host (tenants)` of those that stay. */
  async function removeFromDevices(objects: readonly ObjectKey[]): Promise<string[]> {
    const left: string[] = [];
    for (const [hostname, placed] of await store.placesOfEach(db, objects)) {
      const tenants = placed.map((o) => tenantName(o.kind, o.name));
      const device = inventory.find(hostname);
      const outcome = device ? await devices.removeTenants(device, tenants) : NOT_IN_INVENTORY;
      const stay = outcome.ok ? [] : tenants.filter((tenant) => !outcome.confirmed.includes(tenant));
      if (stay.length > 0) left.push(`${hostname} (${stay.join(', ')})`);
    }
    return left;
  }

  /** Ends a task the job port gave up on (it could not finish after its attempts). */
  async function giveUp(taskId: string, reason: string): Promise<void> {
    const task = await store.getTask(db, taskId);
    if (task?.status === 'STARTED') await failTask(task, `The deployment could not complete: ${reason}.`);
  }

  return { deploy, giveUp };
}
