import t from 'tap';
import { collectWarnings } from './warnings.ts';
import { declarationOf, responseExample } from './test-spec.ts';

const NOT_APPLIED = 'not modelled by this device; kept as given, not applied';
const tenant = (members: Record<string, unknown>, app: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) => ({
  class: 'Tenant',
  ...settings,
  A: { class: 'Application', template: 'generic', ...app, ...members },
});
const service = (fields: Record<string, unknown> = {}) => ({ class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], ...fields });

t.test('realDeclaration gives exactly the warnings of the withWarnings example', async (t) => {
  const expected = responseExample('200', 'withWarnings').results[0];
  t.same(collectWarnings(expected.tenant, declarationOf('realDeclaration')[expected.tenant]), expected.warnings);
});

t.test('what a tenant declares that the device does not apply', async (t) => {
  const cases: { name: string; tenant: Record<string, unknown>; warnings: string[] }[] = [
    {
      name: 'a loopback service with an http pool: nothing',
      tenant: tenant({ s: service({ pool: 'p' }), p: { class: 'Pool', monitors: ['http', { bigip: '/Common/http' }], members: [] } }),
      warnings: [],
    },
    {
      name: 'label, remark and controls are never warned, at any level',
      tenant: tenant(
        {
          s: service({ label: 'l', remark: 'r', controls: {} }),
          p: {
            class: 'Pool',
            label: 'l',
            remark: 'r',
            members: [{ servicePort: 1, serverAddresses: ['127.0.0.1'], label: 'l', remark: 'r' }],
          },
        },
        { label: 'l', remark: 'r', controls: { class: 'Controls' } },
        { label: 'l', remark: 'r', controls: { class: 'Controls', trace: true } },
      ),
      warnings: [],
    },
    {
      name: 'tenant and application settings the device keeps but does not apply',
      tenant: tenant(
        {},
        { enable: false, constants: { a: 1 }, schemaOverlay: 'x' },
        { enable: true, optimisticLockKey: 'k', useCommonRouteDomainTenant: false },
      ),
      warnings: [
        `/T/enable: ${NOT_APPLIED}`,
        `/T/optimisticLockKey: ${NOT_APPLIED}`,
        `/T/useCommonRouteDomainTenant: ${NOT_APPLIED}`,
        `/T/A/enable: ${NOT_APPLIED}`,
        `/T/A/constants: ${NOT_APPLIED}`,
        `/T/A/schemaOverlay: ${NOT_APPLIED}`,
      ],
    },
    {
      name: 'template shared',
      tenant: tenant({}, { template: 'shared' }),
      warnings: ["/T/A/template: template 'shared' is applied as 'generic'"],
    },
    {
      name: 'addresses: route domains on loopback are fine; others, references and pairs are kept, not bound',
      tenant: tenant({
        s: service({
          virtualAddresses: [
            '127.0.0.1%2',
            '127.9.9.9/32',
            '::1',
            '0:0::1%3',
            '10.0.0.1',
            'fe80::1',
            { use: 'addr' },
            { bigip: '/Common/va' },
            ['127.0.0.1', '10.0.0.0/8'],
          ],
        }),
      }),
      warnings: [
        '/T/A/s/virtualAddresses/4: 10.0.0.1 is not a loopback address; kept, not bound',
        '/T/A/s/virtualAddresses/5: fe80::1 is not a loopback address; kept, not bound',
        '/T/A/s/virtualAddresses/6: an address reference is kept, not bound',
        '/T/A/s/virtualAddresses/7: an address reference is kept, not bound',
        '/T/A/s/virtualAddresses/8: a [destination, source] pair is kept, not bound',
      ],
    },
    {
      name: 'service properties first, then its addresses',
      tenant: tenant({
        s: service({ virtualAddresses: ['10.0.0.1'], snat: 'auto', virtualPort: 8080, profileHTTP: { bigip: '/Common/http' } }),
      }),
      warnings: [
        `/T/A/s/snat: ${NOT_APPLIED}`,
        `/T/A/s/profileHTTP: ${NOT_APPLIED}`,
        '/T/A/s/virtualAddresses/0: 10.0.0.1 is not a loopback address; kept, not bound',
      ],
    },
    {
      name: 'monitors other than http, and load balancing other than round robin',
      tenant: tenant({
        p: {
          class: 'Pool',
          slowRampTime: 10,
          loadBalancingMode: 'least-connections-member',
          monitors: ['http', 'tcp', { bigip: '/Common/tcp_half_open' }, { use: 'm' }, { use: '/T/A/m' }, { use: 'gone' }],
        },
        m: { class: 'Monitor', monitorType: 'http' },
      }),
      warnings: [
        `/T/A/p/slowRampTime: ${NOT_APPLIED}`,
        "/T/A/p/loadBalancingMode: load balancing mode 'least-connections-member' is applied as 'round-robin'",
        "/T/A/p/monitors/1: monitor 'tcp' is not applied",
        "/T/A/p/monitors/2: monitor '/Common/tcp_half_open' is not applied",
        "/T/A/p/monitors/3: monitor 'm' (class Monitor) is not applied",
        "/T/A/p/monitors/4: monitor '/T/A/m' (class Monitor) is not applied",
        "/T/A/p/monitors/5: monitor 'gone' is not applied",
        `/T/A/m: class Monitor is not modelled by this device; kept as given, not applied`,
      ],
    },
    {
      name: 'member options, and address discovery other than static',
      tenant: tenant({
        p: {
          class: 'Pool',
          members: [
            { servicePort: 80, addressDiscovery: 'fqdn', hostname: 'web.example', ratio: 2, enable: false, adminState: 'offline' },
            { servicePort: 80, addressDiscovery: 'static', serverAddresses: ['10.0.0.1'], connectionLimit: 5 },
          ],
        },
      }),
      warnings: [
        `/T/A/p/members/0/hostname: ${NOT_APPLIED}`,
        `/T/A/p/members/0/ratio: ${NOT_APPLIED}`,
        "/T/A/p/members/0/addressDiscovery: address discovery 'fqdn' is not applied; only serverAddresses are used",
        `/T/A/p/members/1/connectionLimit: ${NOT_APPLIED}`,
      ],
    },
    {
      name: 'members of classes the device does not model, in declaration order',
      tenant: tenant({ https: { class: 'Service_HTTPS' }, cert: { class: 'Certificate' }, s: service() }),
      warnings: [
        `/T/A/https: class Service_HTTPS is not modelled by this device; kept as given, not applied`,
        `/T/A/cert: class Certificate is not modelled by this device; kept as given, not applied`,
      ],
    },
    {
      name: 'names are escaped in pointers',
      tenant: { class: 'Tenant', 'A~1': { class: 'Application', template: 'http' } },
      warnings: ["/T/A~01/template: template 'http' is applied as 'generic'"],
    },
  ];
  for (const { name, tenant, warnings } of cases) t.same(collectWarnings('T', tenant), warnings, name);
});

t.test('at most 100 warnings, then how many more; each at most 200 characters', async (t) => {
  const many = tenant(Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`m${i}`, { class: 'iRule' }])));
  const warnings = collectWarnings('T', many);
  t.equal(warnings.length, 101);
  t.equal(warnings[99], '/T/A/m99: class iRule is not modelled by this device; kept as given, not applied');
  t.equal(warnings[100], '... and 30 more');
  const long = 'x'.repeat(64);
  const longest = collectWarnings(long, { class: 'Tenant', [long]: { class: 'Application', [long]: { class: 'c'.repeat(64) } } });
  t.equal(longest[0]!.length, 200);
  t.ok(longest[0]!.endsWith('...'));
});
