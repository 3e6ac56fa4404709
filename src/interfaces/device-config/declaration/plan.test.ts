import fc from 'fast-check';
import t from 'tap';
import { planTenant, type ServicePlan } from './plan.ts';
import { readDeployRequest } from './request.ts';
import { isSameTenant } from './same-tenant.ts';
import { declarationOf, info, requestExamples, responseExample, schemaAt } from './test-spec.ts';

const app = (members: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  class: 'Tenant',
  A: { class: 'Application', template: 'generic', ...members },
  ...extra,
});
const service = (fields: Record<string, unknown> = {}) => ({
  class: 'Service_HTTP',
  virtualAddresses: ['127.0.0.1'],
  pool: 'p',
  ...fields,
});
const pool = (fields: Record<string, unknown> = {}) => ({
  class: 'Pool',
  monitors: ['http'],
  members: [{ servicePort: 80, serverAddresses: ['127.0.0.1'] }],
  ...fields,
});
const failure = (tenant: Record<string, unknown>) => {
  const planned = planTenant('T', tenant);
  return planned.ok ? 'planned' : planned.message;
};
const servicesOf = (tenant: Record<string, unknown>): ServicePlan[] => {
  const planned = planTenant('T', tenant);
  if (!planned.ok) throw new Error(planned.message);
  return planned.plan.services;
};

t.test("the seed's first declaration: one service over two members, checked by the http monitor", async (t) => {
  const planned = planTenant('Sample_01', declarationOf('firstDeclaration').Sample_01);
  t.same(planned, {
    ok: true,
    plan: {
      tenant: 'Sample_01',
      declaration: responseExample('200', 'success').declaration.Sample_01,
      services: [
        {
          key: '/Sample_01/A1/service',
          addresses: ['10.0.1.10'],
          port: 80,
          pool: {
            key: '/Sample_01/A1/web_pool',
            members: [
              { host: '192.0.1.10', port: 80 },
              { host: '192.0.1.11', port: 80 },
            ],
            monitor: 'http',
          },
        },
      ],
      lineCount: responseExample('200', 'success').results[0].lineCount,
      warnings: ['/Sample_01/A1/service/virtualAddresses/0: 10.0.1.10 is not a loopback address; kept, not bound'],
    },
  });
});

t.test('realDeclaration plans with its references resolved, the line count and the warnings of withWarnings', async (t) => {
  const expected = responseExample('200', 'withWarnings').results[0];
  const planned = planTenant('Web_Prod', declarationOf('realDeclaration').Web_Prod);
  t.match(planned, {
    ok: true,
    plan: {
      lineCount: expected.lineCount,
      warnings: expected.warnings,
      services: [
        {
          key: '/Web_Prod/App_1/serviceMain',
          addresses: ['10.0.10.10%2'],
          port: 8080,
          pool: {
            key: '/Web_Prod/App_1/web_pool',
            members: [
              { host: '192.0.10.10', port: 80 },
              { host: '192.0.10.11', port: 80 },
            ],
            monitor: 'http',
          },
        },
      ],
    },
  });
});

t.test('every request example plans (a tenant with no application has no service)', async (t) => {
  for (const [name, example] of Object.entries(requestExamples)) {
    const read = readDeployRequest(example.value, schemaAt, info);
    const declaration = read.ok ? (read.request.declaration as Record<string, any>) : {};
    for (const [tenant, value] of Object.entries(declaration).filter(([, v]) => v?.class === 'Tenant')) {
      t.ok(planTenant(tenant, value).ok, `${name}: ${tenant}`);
    }
  }
  t.match(planTenant('Sample_02', declarationOf('removeTenant').Sample_02), { ok: true, plan: { services: [], lineCount: 2 } });
});

t.test('pools: named, by path, by {use}; members in rotation only; hosts without route domain', async (t) => {
  const members = [
    { servicePort: 8080, serverAddresses: ['10.0.0.1%2', '2001:db8::1%3', '10.0.0.2/32'] },
    { servicePort: 8081, serverAddresses: ['10.0.0.3'], enable: false },
    { servicePort: 8082, serverAddresses: ['10.0.0.4'], adminState: 'disable' },
    { servicePort: 8083, serverAddresses: ['10.0.0.5'], adminState: 'offline' },
    { servicePort: 8084, serverAddresses: ['10.0.0.6'], adminState: 'enable', enable: true },
    { servicePort: 8085, addressDiscovery: 'fqdn' },
  ];
  const [byName, byPath, byUse, other, none] = servicesOf({
    class: 'Tenant',
    A: {
      class: 'Application',
      s1: service({ virtualAddresses: ['127.0.0.1', { use: 'va' }, ['127.0.0.2', '0.0.0.0/0'], '::1'], virtualPort: 0 }),
      s2: service({ pool: '/T/B/q' }),
      s3: service({ pool: { use: 'p' } }),
      s4: service({ pool: { use: '/T/B/q' } }),
      s5: service({ pool: undefined }),
      p: pool({ members, monitors: ['tcp', { bigip: '/Common/http' }] }),
    },
    B: { class: 'Application', q: pool({ monitors: [] }) },
  });
  t.same(byName, {
    key: '/T/A/s1',
    addresses: ['127.0.0.1', '::1'],
    port: 0,
    pool: {
      key: '/T/A/p',
      members: [
        { host: '10.0.0.1', port: 8080 },
        { host: '2001:db8::1', port: 8080 },
        { host: '10.0.0.2', port: 8080 },
        { host: '10.0.0.6', port: 8084 },
      ],
      monitor: 'http',
    },
  });
  t.same(byPath, {
    key: '/T/A/s2',
    addresses: ['127.0.0.1'],
    port: 80,
    pool: { key: '/T/B/q', members: [{ host: '127.0.0.1', port: 80 }], monitor: null },
  });
  t.equal(byUse!.pool.key, '/T/A/p');
  t.equal(other!.pool.key, '/T/B/q');
  t.same(
    none,
    { key: '/T/A/s5', addresses: ['127.0.0.1'], port: 80, pool: { key: '', members: [], monitor: null } },
    'no pool: no members',
  );
});

t.test('a reference that resolves to nothing fails the tenant, naming the pointer', async (t) => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a pool name that is no member', app({ s: service({ pool: 'nope' }) }), "/T/A/s/pool: pool 'nope' does not exist"],
    [
      'a member that is not a pool',
      app({ s: service({ pool: 'm' }), m: { class: 'Monitor' } }),
      "/T/A/s/pool: 'm' is not a Pool (class Monitor)",
    ],
    ['a service as pool', app({ s: service({ pool: 's' }) }), "/T/A/s/pool: 's' is not a Pool (class Service_HTTP)"],
    ['an application setting is no member', app({ s: service({ pool: 'template' }) }), "/T/A/s/pool: pool 'template' does not exist"],
    ['an Object.prototype name is no member', app({ s: service({ pool: 'toString' }) }), "/T/A/s/pool: pool 'toString' does not exist"],
    ['a path into another tenant', app({ s: service({ pool: '/Other/A/p' }), p: pool() }), "/T/A/s/pool: pool '/Other/A/p' does not exist"],
    ['a path too short', app({ s: service({ pool: '/T/p' }), p: pool() }), "/T/A/s/pool: pool '/T/p' does not exist"],
    [
      'a path into a tenant setting',
      app({ s: service({ pool: '/T/controls/p' }), p: pool() }, { controls: { p: pool() } }),
      "/T/A/s/pool: pool '/T/controls/p' does not exist",
    ],
    ['a {use} of nothing', app({ s: service({ pool: { use: 'gone' } }) }), "/T/A/s/pool: pool 'gone' does not exist"],
    [
      'a {bigip} pool: the device has none',
      app({ s: service({ pool: { bigip: '/Common/web_pool' } }) }),
      '/T/A/s/pool: 01020036:3: The requested pool (/Common/web_pool) was not found.',
    ],
    [
      'a long reference is echoed at most 64 characters',
      app({ s: service({ pool: 'p'.repeat(255) }) }),
      `/T/A/s/pool: pool '${'p'.repeat(61)}...' does not exist`,
    ],
    [
      'a monitor outside the built-in set',
      app({ s: service(), p: pool({ monitors: ['http', 'tcp_custom'] }) }),
      "/T/A/p/monitors/1: monitor 'tcp_custom' is not a built-in monitor",
    ],
    [
      'a {bigip} monitor the device does not have',
      app({ p: pool({ monitors: [{ bigip: '/Common/tcp_custom' }] }) }),
      '/T/A/p/monitors/0: 01020036:3: The requested monitor (/Common/tcp_custom) was not found.',
    ],
    [
      'a {bigip} built-in written with a dash',
      app({ p: pool({ monitors: [{ bigip: '/Common/tcp-half-open' }] }) }),
      '/T/A/p/monitors/0: 01020036:3: The requested monitor (/Common/tcp-half-open) was not found.',
    ],
    ['a {use} monitor of nothing', app({ p: pool({ monitors: [{ use: 'mon' }] }) }), "/T/A/p/monitors/0: monitor 'mon' does not exist"],
    [
      'a {use} monitor that is a pool',
      app({ p: pool({ monitors: [{ use: 'q' }] }), q: pool() }),
      "/T/A/p/monitors/0: 'q' is not a Monitor (class Pool)",
    ],
    [
      'a monitor of an unused pool still counts',
      app({ q: pool({ monitors: ['nope'] }) }),
      "/T/A/q/monitors/0: monitor 'nope' is not a built-in monitor",
    ],
  ];
  for (const [name, tenant, message] of cases) t.equal(failure(tenant), message, name);
});

t.test('references that resolve', async (t) => {
  const builtins = ['http', 'https', 'http2', 'tcp', 'tcp-half-open', 'udp', 'icmp', 'gateway-icmp'];
  const paths = builtins.map((m) => ({ bigip: `/Common/${m.replaceAll('-', '_')}` }));
  t.equal(failure(app({ p: pool({ monitors: builtins }) })), 'planned', 'every built-in name');
  t.equal(failure(app({ p: pool({ monitors: paths }) })), 'planned', 'every built-in under /Common');
  t.equal(
    failure(
      app(
        { p: pool({ monitors: [{ use: 'm' }, { use: '/T/B/m' }] }), m: { class: 'Monitor' } },
        { B: { class: 'Application', m: { class: 'Monitor' } } },
      ),
    ),
    'planned',
    '{use} by name and by path',
  );
  t.same(
    servicesOf(app({ s: service(), p: pool({ monitors: ['tcp', { use: 'm' }] }), m: { class: 'Monitor', monitorType: 'http' } }))[0]!.pool
      .monitor,
    null,
    'only http itself is applied',
  );
});

t.test(
  'the line count: 2 per tenant, 1 per application, 8 per service + 2 per address, 4 per pool + 4 per member entry + 5 per monitor',
  async (t) => {
    const planned = planTenant(
      'T',
      app(
        {
          s: service({ virtualAddresses: ['127.0.0.1', '127.0.0.2'] }),
          p: pool({
            monitors: ['http', 'tcp'],
            members: [
              { servicePort: 1, serverAddresses: ['10.0.0.1', '10.0.0.2'] },
              { servicePort: 2, serverAddresses: ['10.0.0.3'], enable: false },
            ],
          }),
          i: { class: 'iRule' },
        },
        { B: { class: 'Application' } },
      ),
    );
    t.equal(planned.ok && planned.plan.lineCount, 2 + 1 + 1 + (8 + 2 * 2) + (4 + 4 * 2 + 5 * 2));
  },
);

t.test('planning does not change its input, and a planned declaration plans to itself', async (t) => {
  const input = app({ s: { class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], pool: 'p' }, p: pool() });
  const before = structuredClone(input);
  const planned = planTenant('T', input);
  t.same(input, before, 'input unchanged');
  const again = planned.ok ? planTenant('T', planned.plan.declaration) : undefined;
  t.ok(again?.ok && planned.ok && isSameTenant(again.plan.declaration, planned.plan.declaration));
  t.same(again, planned, 'idempotent');
});

t.test('planning never throws on any declaration the reader accepts (property)', async (t) => {
  const name = fc.constantFrom('p', 'q', 's', 'm', 'A', 'B', 'x');
  const address = fc.constantFrom('127.0.0.1', '127.0.0.1%2', '::1', '10.0.0.1/24', 'fe80::1%7', 'bogus');
  const reference = fc.oneof(
    name,
    fc.constantFrom('/T/A/p', '/T/B/q', '/X/A/p', '/T'),
    fc.record({ use: name }),
    fc.record({ bigip: fc.constantFrom('/Common/http', '/Common/x', '/') }),
  );
  const monitor = fc.oneof(fc.constantFrom('http', 'tcp', 'nope'), reference);
  const members = fc.array(
    fc.record(
      {
        servicePort: fc.integer({ min: 0, max: 65535 }),
        serverAddresses: fc.array(address, { minLength: 1, maxLength: 2 }),
        enable: fc.boolean(),
        adminState: fc.constantFrom('enable', 'disable', 'offline'),
        ratio: fc.nat(),
      },
      { requiredKeys: ['servicePort', 'serverAddresses'] },
    ),
    { maxLength: 3 },
  );
  const member = fc.oneof(
    fc.record(
      {
        class: fc.constant('Service_HTTP'),
        virtualAddresses: fc.array(fc.oneof(address, fc.record({ use: name })), { minLength: 1, maxLength: 2 }),
        pool: reference,
        virtualPort: fc.integer({ min: 0, max: 65535 }),
        snat: fc.constant('auto'),
      },
      { requiredKeys: ['class', 'virtualAddresses'] },
    ),
    fc.record(
      {
        class: fc.constant('Pool'),
        monitors: fc.array(monitor, { maxLength: 2 }),
        members,
        loadBalancingMode: fc.constantFrom('round-robin', 'ratio-member'),
      },
      { requiredKeys: ['class'] },
    ),
    fc.record({ class: fc.constantFrom('Monitor', 'iRule') }),
  );
  const application = fc.dictionary(name, member, { maxKeys: 5 }).map((members) => ({ class: 'Application', ...members }));
  const tenant = fc.dictionary(fc.constantFrom('A', 'B'), application).map((apps) => ({ class: 'Tenant', ...apps }));
  let accepted = 0;
  fc.assert(
    fc.property(tenant, (T) => {
      const read = readDeployRequest({ class: 'ADC', schemaVersion: '3.0.0', T }, schemaAt, info);
      if (!read.ok) return true;
      accepted++;
      const planned = planTenant('T', (read.request.declaration as Record<string, any>).T);
      if (!planned.ok) return planned.message.startsWith('/T/');
      return (
        planned.plan.services.every((s) => s.key.startsWith('/T/') && s.pool.members.every((m) => !m.host.includes('%'))) &&
        planned.plan.warnings.length <= 101
      );
    }),
    { numRuns: 1000 },
  );
  t.ok(accepted > 300, `most generated tenants are valid (${accepted} of 1000)`);
});

t.test('references into /Common/Shared are kept and reported, not followed: the service runs without members', async (t) => {
  const tenant = app({
    s: service({ pool: { use: '/Common/Shared/shared_pool' } }),
    p: pool({ monitors: [{ use: '/Common/Shared/shared_monitor' }] }),
  });
  const planned = planTenant('T', tenant);
  if (!planned.ok) return t.fail(planned.message);
  t.same(planned.plan.services[0]!.pool, { key: '', members: [], monitor: null }, 'no members');
  t.match(planned.plan.warnings, [
    "/T/A/s/pool: pool '/Common/Shared/shared_pool' of tenant Common is kept, not followed: this service has no members here",
    "/T/A/p/monitors/0: monitor '/Common/Shared/shared_monitor' is not applied",
  ]);
  // Within Common itself the same path is a member of its own tenant, and must resolve.
  const common = planTenant('Common', {
    class: 'Tenant',
    Shared: { class: 'Application', template: 'shared', s: service({ pool: '/Common/Shared/gone' }) },
  });
  t.match(common, { ok: false, message: "/Common/Shared/s/pool: pool '/Common/Shared/gone' does not exist" });
});

t.test('a member whose addresses are discovered, or not given yet, adds nothing to rotation', async (t) => {
  const tenant = app({
    s: service(),
    p: pool({
      members: [
        { servicePort: 80, addressDiscovery: { use: '/Common/Shared/discovery' } },
        { servicePort: 81, addressDiscovery: 'static', serverAddresses: [] },
        { servicePort: 82, serverAddresses: ['127.0.0.2'] },
      ],
    }),
  });
  t.same(readDeployRequest({ class: 'ADC', schemaVersion: '3.56.0', T: tenant }, schemaAt, info).ok, true, 'valid');
  const planned = planTenant('T', tenant);
  if (!planned.ok) return t.fail(planned.message);
  t.same(planned.plan.services[0]!.pool.members, [{ host: '127.0.0.2', port: 82 }]);
  t.match(planned.plan.warnings, [
    "/T/A/p/members/0/addressDiscovery: address discovery '/Common/Shared/discovery' is not applied; only serverAddresses are used",
  ]);
});
