import type { Clock } from '../../lib/clock.ts';
import { ok } from '../../lib/errors.ts';
import type { Database } from '../../stores/database.ts';
import type { DeviceClient } from './device-client.ts';
import type { DeviceInventory } from './device-inventory.ts';
import { type Outcome, quote, refused } from './topology-outcome.ts';
import { KIND_LABEL, type ObjectKey, type ObjectKind, type ObjectRef, tenantName } from './topology-plan.ts';
import { topologyStore as store } from './topology-store.ts';

/** A delete that went through: the devices no longer in the inventory that were not asked to remove their tenants. */
export type Deleted = { skippedDevices: { hostname: string; tenants: string[] }[]; message: string };

/** Why a delete is refused: nothing of that name, in use (or being deployed), or a device that could not remove it. */
export type DeleteRefusal = 'objectNotFound' | 'objectInUse' | 'objectBusy' | 'deviceUnavailable';

export type TopologyDeleteOptions = { db: Database; clock: Clock; inventory: DeviceInventory; devices: DeviceClient };

/** What a delete answers: with a sentence per device it skipped because it is no longer in the inventory (its tenants may still be there). */
function deletedMessage(label: string, skipped: Deleted['skippedDevices']): string {
  const notes = skipped.map(
    (s) =>
      ` Device ${quote(s.hostname)} is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES), so it was not asked to remove ${s.tenants.map(quote).join(', ')}; they may still be there.`,
  );
  return `${label} was deleted.${notes.join('')}`;
}

/** Why an object cannot be deleted: the first object that still uses it. */
function inUse(kind: ObjectKind, name: string, user: ObjectRef): string {
  const label = `${KIND_LABEL[kind]} ${quote(name)}`;
  const verb = kind === 'ssl' ? 'are' : 'is';
  if (user.fromKind === 'policy' && user.via !== '')
    return `${label} ${verb} used by rule ${quote(user.via)} of security policy ${quote(user.fromName)}.`;
  return `${label} ${verb} used by ${KIND_LABEL[user.fromKind].toLowerCase()} ${quote(user.fromName)}; delete the ${KIND_LABEL[user.fromKind].toLowerCase()} first.`;
}

/** The security policy created with a topology goes with it, unless another topology uses it (one it reused stays). */
async function ownedPolicy(tx: Database, topologyName: string): Promise<ObjectKey | undefined> {
  const policy = (await store.usesOf(tx, 'topology', topologyName)).find((r) => r.toKind === 'policy');
  if (!policy) return undefined;
  const owner = await store.getObject(tx, 'policy', policy.toName);
  const ownedHere = owner && (await store.getTask(tx, owner.createdByTask))?.topologyName === topologyName;
  if (!ownedHere) return undefined;
  const users = await store.usersOf(tx, 'policy', policy.toName);
  return users.every((u) => u.fromKind === 'topology' && u.fromName === topologyName) ? { kind: 'policy', name: policy.toName } : undefined;
}

/** What deleting an object takes along, or why it cannot go: a topology while its task runs, another object while one uses it. */
async function doomedBy(tx: Database, kind: ObjectKind, name: string): Promise<Outcome<ObjectKey[], DeleteRefusal>> {
  if (!(await store.getObject(tx, kind, name))) return refused('objectNotFound', `${KIND_LABEL[kind]} ${quote(name)} was not found.`);
  if (kind !== 'topology') {
    const user = (await store.usersOf(tx, kind, name))[0];
    return user ? refused('objectInUse', inUse(kind, name, user)) : ok([{ kind, name }]);
  }
  const task = await store.lastTaskOf(tx, name);
  if (task?.status === 'STARTED')
    return refused('objectBusy', `Topology ${quote(name)} is being deployed by task ${task.id}; delete it when the task has ended.`);
  const policy = await ownedPolicy(tx, name);
  return ok(policy ? [{ kind, name }, policy] : [{ kind, name }]);
}

/**
 * Deletes an object: refused while another object uses it (a topology: while its task runs); its
 * tenants leave every device where it is or may be first (a device that has none answers `no
 * change`); a device that fails: 503, the records stay where the tenants stay; a device no longer
 * in the inventory is not asked and does not block (named in the answer); then the records.
 * A topology takes the security policy created with it along, unless another topology uses that
 * policy (a policy another topology created and this one reused stays).
 */
export function createTopologyDelete({ db, clock, inventory, devices }: TopologyDeleteOptions) {
  /** Decided and marked in one transaction: a create that starts using the object meanwhile either came first (the delete sees it: 409) or comes after (it sees the mark and does not reuse it). */
  const decide = (kind: ObjectKind, name: string) =>
    db.transaction(async (tx): Promise<Outcome<ObjectKey[], DeleteRefusal>> => {
      const decided = await doomedBy(tx, kind, name);
      if (decided.ok) for (const object of decided.value) await store.markDeleting(tx, object.kind, object.name, clock.nowMs());
      return decided;
    });

  const unmark = (doomed: readonly ObjectKey[]) =>
    db.transaction(async (tx) => {
      for (const object of doomed) await store.markDeleting(tx, object.kind, object.name, undefined);
    });

  const clear = (objects: readonly ObjectKey[], hostname: string) =>
    db.transaction(async (tx) => {
      for (const object of objects) await store.clearDevice(tx, object.kind, object.name, hostname);
    });

  /**
   * Off the devices first, device by device; what a device confirmed is no longer recorded there, so
   * a delete cut off half-way leaves records that say where the tenants still are (or may be).
   */
  async function offDevices(label: string, doomed: readonly ObjectKey[]): Promise<Outcome<Deleted['skippedDevices'], 'deviceUnavailable'>> {
    const skipped: Deleted['skippedDevices'] = [];
    const cleared: string[] = [];
    for (const [hostname, objects] of await store.placesOfEach(db, doomed)) {
      const tenants = objects.map((o) => tenantName(o.kind, o.name));
      const device = inventory.find(hostname);
      if (!device) {
        skipped.push({ hostname, tenants });
        continue;
      }
      const outcome = await devices.removeTenants(device, tenants);
      const gone = outcome.ok ? objects : objects.filter((o) => outcome.confirmed.includes(tenantName(o.kind, o.name)));
      if (gone.length > 0) await clear(gone, hostname);
      if (!outcome.ok) {
        await unmark(doomed);
        const stay = tenants.filter((tenant) => !outcome.confirmed.includes(tenant));
        const done = cleared.length > 0 ? ` (its tenants already left ${cleared.map(quote).join(', ')})` : '';
        return refused(
          'deviceUnavailable',
          `Device ${quote(hostname)} could not remove ${stay.map(quote).join(', ')}: ${outcome.message}. ${label} was not deleted${done}; send the delete again.`,
        );
      }
      cleared.push(hostname);
    }
    return ok(skipped);
  }

  return async function remove(kind: ObjectKind, name: string): Promise<Outcome<Deleted, DeleteRefusal>> {
    const decided = await decide(kind, name);
    if (!decided.ok) return decided;
    const label = `${KIND_LABEL[kind]} ${quote(name)}`;
    const skipped = await offDevices(label, decided.value);
    if (!skipped.ok) return skipped;
    await db.transaction(async (tx) => {
      for (const object of decided.value) await store.deleteObject(tx, object.kind, object.name);
    });
    return ok({ skippedDevices: skipped.value, message: deletedMessage(label, skipped.value) });
  };
}
