import t from 'tap';
import { findAddressConflicts } from './conflicts.ts';
import type { ServicePlan } from './plan.ts';

/** A tenant plan with services given as `name: [addresses, port]`. */
const tenant = (name: string, services: Record<string, [string[], number]>) => ({
  tenant: name,
  services: Object.entries(services).map(
    ([service, [addresses, port]]): ServicePlan => ({
      key: `/${name}/A/${service}`,
      addresses,
      port,
      pool: { key: '', members: [], monitor: null },
    }),
  ),
});
const conflicts = (plans: ReturnType<typeof tenant>[], deployed: ReturnType<typeof tenant>[] = []) =>
  Object.fromEntries(findAddressConflicts(plans, deployed));

t.test('an address and port another deployed tenant serves fails the tenant, naming address, port and owner', async (t) => {
  t.same(conflicts([tenant('T', { svc: [['127.0.0.1', '10.0.0.1'], 80] })], [tenant('Other', { svc: [['10.0.0.1'], 80] })]), {
    T: '/T/A/svc: virtual address 10.0.0.1 port 80 is already served by /Other/A/svc',
  });
});

t.test('the same address in another route domain, on another port, or with another prefix is another place', async (t) => {
  const deployed = [tenant('Other', { svc: [['10.0.0.1'], 80] })];
  for (const [addresses, port] of [
    [['10.0.0.1%2'], 80],
    [['10.0.0.1'], 81],
    [['10.0.0.1/24'], 80],
    [['10.0.0.2'], 80],
  ] as const) {
    t.same(conflicts([tenant('T', { svc: [[...addresses], port] })], deployed), {}, `${addresses[0]}:${port}`);
  }
});

t.test('the same place written another way is the same place', async (t) => {
  const deployed = [tenant('Other', { v4: [['10.0.0.1'], 80], v6: [['::1'], 443], rd: [['127.0.0.1%2'], 80] })];
  const cases: [string, string][] = [
    ['10.0.0.1%0', '/T/A/svc: virtual address 10.0.0.1%0 port 80 is already served by /Other/A/v4'],
    ['10.0.0.1/32', '/T/A/svc: virtual address 10.0.0.1/32 port 80 is already served by /Other/A/v4'],
    ['127.0.0.1%2/32', '/T/A/svc: virtual address 127.0.0.1%2/32 port 80 is already served by /Other/A/rd'],
  ];
  for (const [address, message] of cases) t.same(conflicts([tenant('T', { svc: [[address], 80] })], deployed), { T: message }, address);
  t.same(conflicts([tenant('T', { svc: [['0:0:0:0:0:0:0:1'], 443] })], deployed), {
    T: '/T/A/svc: virtual address 0:0:0:0:0:0:0:1 port 443 is already served by /Other/A/v6',
  });
});

t.test('a tenant the deployment replaces is no owner', async (t) => {
  t.same(conflicts([tenant('T', { svc: [['10.0.0.1'], 80] })], [tenant('T', { old: [['10.0.0.1'], 80] })]), {});
});

t.test('within one deployment the later tenant fails; a failed tenant claims nothing', async (t) => {
  const plans = [
    tenant('T1', { a: [['10.0.0.1'], 80] }),
    tenant('T2', { b: [['10.0.0.2'], 80], c: [['10.0.0.1'], 80] }),
    tenant('T3', { d: [['10.0.0.2'], 80] }),
  ];
  t.same(
    conflicts(plans),
    { T2: '/T2/A/c: virtual address 10.0.0.1 port 80 is already served by /T1/A/a' },
    'T3 may have what T2 would have had',
  );
});

t.test('twice within one tenant fails it: two services, or one listing an address twice', async (t) => {
  t.same(conflicts([tenant('T', { a: [['10.0.0.1'], 80], b: [['10.0.0.1'], 80] })]), {
    T: '/T/A/b: virtual address 10.0.0.1 port 80 is already served by /T/A/a',
  });
  t.same(conflicts([tenant('T', { a: [['10.0.0.1', '10.0.0.1%0'], 80] })]), {
    T: '/T/A/a: virtual address 10.0.0.1%0 port 80 is already served by /T/A/a',
  });
});

t.test('nothing shared: no conflicts', async (t) => {
  t.same(findAddressConflicts([], []).size, 0);
  t.same(conflicts([tenant('T', { a: [[], 80] })], [tenant('U', { b: [[], 80] })]), {}, 'services without string addresses');
});
