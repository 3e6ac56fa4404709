// Test helper: the devices the management system's service deploys to, in memory: each holds its tenants
// and does with a call what the test says (apply it, refuse it, apply part and lose the answer, ...), and
// the inventory can drop a device at any moment (as a restart with another PORTOLAN_CENTRAL_DEVICES does).
import type { DeviceClient, DeviceOutcome } from './device-client.ts';
import type { DeviceInventory, ManagedDevice } from './device-inventory.ts';

export type FakeCall = { op: 'deploy' | 'remove'; tenants: readonly string[] };
export type FakeDevice = { hostname: string; tenants: Set<string>; behaviour: Behaviour; calls: FakeCall[] };
/** What a device does with a call and answers. */
export type Behaviour = (call: FakeCall, device: FakeDevice) => DeviceOutcome | Promise<DeviceOutcome>;

/** Applies the named tenants of a call to the device (deploy: now there; remove: gone, `no change` if absent). */
export function applyTo(device: FakeDevice, op: FakeCall['op'], tenants: readonly string[]): void {
  for (const tenant of tenants) op === 'deploy' ? device.tenants.add(tenant) : device.tenants.delete(tenant);
}

/** Does everything asked (the default). */
export const works: Behaviour = (call, device) => {
  applyTo(device, call.op, call.tenants);
  return { ok: true };
};

/** Refuses the connection: nothing reaches it. */
export const down: Behaviour = () => ({
  ok: false,
  message: 'the device could not be reached (ECONNREFUSED)',
  confirmed: [],
  others: 'unchanged',
});

/** Applies every tenant but those starting with `prefix`, which it refuses (per-tenant results: 207). */
export const refusesTenants =
  (prefix: string): Behaviour =>
  (call, device) => {
    const done = call.tenants.filter((tenant) => !tenant.startsWith(prefix));
    applyTo(device, call.op, done);
    return { ok: false, message: `the device refused ${prefix}... (declaration failed)`, confirmed: done, others: 'unchanged' };
  };

/** Applies the tenants `applied` picks, then the answer is lost (a time-out, a cut connection). */
export const losesAnswer =
  (applied: (tenants: readonly string[]) => readonly string[] = (tenants) => tenants, then?: () => void): Behaviour =>
  (call, device) => {
    applyTo(device, call.op, applied(call.tenants));
    then?.();
    return { ok: false, message: 'the device did not answer within 30 seconds', confirmed: [], others: 'unknown' };
  };

/**
 * Fake devices under these host names, all working and in the inventory at first.
 *
 * @example
 * const fake = createFakeDevices(['dev1', 'dev2']);
 * fake.device('dev2').behaviour = down;
 * fake.drop('dev2'); // no longer in the inventory
 */
export function createFakeDevices(hostnames: readonly string[]) {
  const devices = new Map(
    hostnames.map((hostname): [string, FakeDevice] => [hostname, { hostname, tenants: new Set(), behaviour: works, calls: [] }]),
  );
  const listed = new Set(hostnames);
  const managed = (hostname: string): ManagedDevice => ({
    hostname,
    url: `http://${hostname}.invalid:8100`,
    username: 'admin',
    password: 'device pw',
  });
  const inventory: DeviceInventory = {
    list: () => [...listed].map(managed),
    find: (hostname) => (listed.has(hostname) ? managed(hostname) : undefined),
    hostnames: () => new Set(listed),
  };
  const run = async (hostname: string, call: FakeCall): Promise<DeviceOutcome> => {
    const device = devices.get(hostname)!;
    device.calls.push(call);
    return device.behaviour(call, device);
  };
  const client: DeviceClient = {
    deployTenants: (target, tenants) => run(target.hostname, { op: 'deploy', tenants: Object.keys(tenants) }),
    removeTenants: (target, tenants) =>
      tenants.length === 0 ? Promise.resolve({ ok: true }) : run(target.hostname, { op: 'remove', tenants: [...tenants] }),
  };
  return {
    inventory,
    client,
    device: (hostname: string) => devices.get(hostname)!,
    /** The device's sslo tenants, sorted. */
    tenantsOn: (hostname: string) => [...devices.get(hostname)!.tenants].sort(),
    drop: (hostname: string) => listed.delete(hostname),
  };
}

export type FakeDevices = ReturnType<typeof createFakeDevices>;
