import type { Database } from '../../stores/database.ts';
import type { Definition, ObjectDef, ObjectKind } from './topology-plan.ts';
import { topologyStore as store, type TaskRow } from './topology-store.ts';

/** An object as stored, with the names of the objects that use it and the devices it is (or may be) deployed to. */
export type ObjectRead = { definition: Definition; usedBy: string[]; devices: string[]; unconfirmedDevices: string[] };
/** A topology as read: its object, the chains and services it reaches and its last task. */
export type TopologyRead = ObjectRead & { serviceChains: string[]; services: string[]; lastTask: TaskRow | undefined };

/** The topology and every object it reaches (its SSL settings, policy, the policy's chains, their services). */
export async function reachable(tx: Database, topologyName: string): Promise<ObjectDef[]> {
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
 * The reads of the management system: lookups, undefined when there is nothing of that name (the
 * handlers answer that absence in the spec's words).
 */
export function createTopologyReads(db: Database) {
  async function read(kind: ObjectKind, name: string): Promise<ObjectRead | undefined> {
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

  async function readTopology(name: string): Promise<TopologyRead | undefined> {
    const found = await read('topology', name);
    if (!found) return undefined;
    const objects = await reachable(db, name);
    const names = (kind: ObjectKind) => objects.filter((o) => o.kind === kind).map((o) => o.name);
    const task = await store.lastTaskOf(db, name);
    return { ...found, serviceChains: names('chain'), services: names('service'), lastTask: task };
  }

  /**
   * One page of the topologies, ordered by name in code points (the same on every store, whatever its
   * collation): the `limit` after the first `offset`, and how many there are in all. A topology deleted
   * while the page is read is left out.
   */
  async function listTopologies(offset: number, limit: number): Promise<{ total: number; topologies: TopologyRead[] }> {
    const names = (await store.namesOf(db, 'topology')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const topologies: TopologyRead[] = [];
    for (const name of names.slice(offset, offset + limit)) {
      const found = await readTopology(name);
      if (found) topologies.push(found);
    }
    return { total: names.length, topologies };
  }

  return { read, readTopology, listTopologies, task: (id: string) => store.getTask(db, id) };
}
