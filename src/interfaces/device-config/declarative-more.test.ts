import t from 'tap';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { EXAMPLES } from './declaration/test-examples.ts';
import { DUPLICATE_MESSAGE } from './appsvcs-multi.ts';
import { ADMIN_PASSWORD, deviceClient } from './test-device.ts';

/** A bare declaration of tenant `name`: one application `app` with a service on a non-loopback address (nothing binds). */
const tenant = (name: string, address: string, app = 'A1') => ({
  class: 'ADC',
  schemaVersion: '3.56.0',
  id: `more-${name}`,
  [name]: {
    class: 'Tenant',
    [app]: {
      class: 'Application',
      S: { class: 'Service_HTTP', virtualAddresses: [address], pool: 'P' },
      P: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: ['192.0.2.210'] }] },
    },
  },
});
const application = (address: string) => ({
  class: 'Application',
  S: { class: 'Service_HTTP', virtualAddresses: [address], pool: 'P' },
  P: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: ['192.0.2.220'] }] },
});

t.test('the published example shapes deploy, as a list of declarations each answered on its own', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const info = await sdk.getDeployInfo({ client });
  t.match(info.data, { version: '3.56.0', schemaCurrent: '3.56.0' }, 'the current release is advertised');

  // Two examples declare the Common tenant: in one list they would both be refused (a tenant named twice).
  const [alone, listed] = [EXAMPLES.filter(([n]) => n === 'address-discovery'), EXAMPLES.filter(([n]) => n !== 'address-discovery')];
  const all = await sdk.deployDeclaration({ client, body: listed.map(([, body]) => body) as never });
  t.equal(all.response?.status, 200, 'every example deployed');
  const items = (all.data as unknown as { code: number; items: { results: { code: number; tenant: string }[] }[] }).items;
  t.equal(items.length, listed.length, 'one answer per declaration, in order');
  for (const [index, [name]] of listed.entries())
    t.ok(
      items[index]?.results?.every((r) => r.code === 200),
      `${name}: every tenant 200`,
    );
  for (const [name, body] of alone) t.equal((await sdk.deployDeclaration({ client, body: body as never })).response?.status, 200, name);
  const deployed = await sdk.getDeclaration({ client });
  t.ok(Object.hasOwn(deployed.data as object, 'Ex_Waf') && Object.hasOwn(deployed.data as object, 'Ex_Constants'), 'and kept');

  const mixed = await sdk.deployDeclaration({
    client,
    body: [tenant('Dup', '10.2.0.1'), tenant('Solo', '10.2.0.2'), tenant('Dup', '10.2.0.3'), { class: 'ADC' }] as never,
  });
  t.equal(mixed.response?.status, 207, 'items that differ: 207');
  t.match(mixed.data, {
    code: 207,
    items: [
      { code: 422, message: DUPLICATE_MESSAGE },
      { results: [{ code: 200, tenant: 'Solo' }] },
      { code: 422, message: DUPLICATE_MESSAGE },
      { code: 422, message: 'declaration is invalid', errors: [": should have required property 'schemaVersion'"] },
    ],
  });
  const refused = await sdk.deployDeclaration({ client, body: [tenant('Dup', '10.2.0.1'), tenant('Dup', '10.2.0.3')] as never });
  t.equal(refused.response?.status, 422, 'every item refused: 422');
  t.match(refused.error, { code: 422, message: DUPLICATE_MESSAGE, items: [{ code: 422 }, { code: 422 }] });
});

t.test('PATCH applies JSON Patch operations to the deployed tenants and deploys them', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  t.equal((await sdk.deployDeclaration({ client, body: tenant('P1', '10.3.0.1') as never })).response?.status, 200);

  const added = await sdk.patchDeclaration({
    client,
    body: [
      { op: 'add', path: '/P1/A2', value: application('10.3.0.2') },
      { op: 'add', path: '/P1/A1/P/members/0/serverAddresses/-', value: '192.0.2.211' },
      { op: 'add', path: '/P2', value: { class: 'Tenant', A: application('10.3.0.3') } },
    ],
  });
  t.equal(added.response?.status, 200);
  t.match(added.data, {
    results: [
      { code: 200, message: 'success', tenant: 'P1' },
      { code: 200, tenant: 'P2' },
    ],
  });
  const after = (await sdk.getTenantDeclaration({ client, path: { tenants: 'P1,P2' } })).data as Record<string, any>;
  t.same(after.P1.A1.P.members[0].serverAddresses, ['192.0.2.210', '192.0.2.211']);
  t.ok(after.P1.A2 && after.P2.A, 'the new application and the new tenant are deployed');

  const refusals: [string, unknown, string][] = [
    ['test', [{ op: 'test', path: '/P1/class', value: 'Tenant' }], "invalid patch - op 'test' is not supported"],
    ['updateMode', [{ op: 'replace', path: '/updateMode', value: 'complete' }], "invalid patch - updateMode value can only be 'selective'"],
    ['a missing path', [{ op: 'replace', path: '/P9/A1', value: {} }], 'InvalidPatchOperationError: path /P9/A1 does not exist'],
  ];
  for (const [name, body, message] of refusals) {
    const answer = await sdk.patchDeclaration({ client, body: body as never });
    t.equal(answer.response?.status, 422, name);
    t.match(answer.error, { code: 422, message }, name);
  }
  const shape = await sdk.patchDeclaration({ client, body: [{ op: 'add', path: '/P1/A3' }] as never });
  t.match(shape.error, { code: 422, message: 'declaration is invalid', errors: ["/0: should have required property 'value'"] });
  const invalid = await sdk.patchDeclaration({ client, body: [{ op: 'remove', path: '/P1/A1/S/virtualAddresses' }] });
  t.match(invalid.error, { code: 422, errors: ["/P1/A1/S: should have required property 'virtualAddresses'"] }, 'the result is checked');

  const removed = await sdk.patchDeclaration({ client, body: { op: 'remove', path: '/P2' } });
  t.match(removed.data, { results: [{ code: 200, message: 'success', tenant: 'P2' }] }, 'one operation alone; a removed tenant is removed');
  t.equal((await sdk.getTenantDeclaration({ client, path: { tenants: 'P2' } })).response?.status, 404);
  t.equal((await sdk.getTenantDeclaration({ client, path: { tenants: 'P1' } })).response?.status, 200, 'other tenants untouched');
});

t.test('the per-application API deploys, reads and removes applications of one tenant', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const path = { tenant: 'PerApp' };

  t.equal((await sdk.listApplications({ client, path })).response?.status, 404, 'no tenant yet');
  const first = await sdk.deployApplications({ client, path, body: { schemaVersion: '3.56.0', A1: application('10.4.0.1') } as never });
  t.equal(first.response?.status, 200, 'a new tenant is created');
  t.match(first.data, {
    results: [{ code: 200, tenant: 'PerApp' }],
    declaration: { schemaVersion: '3.56.0', A1: { class: 'Application' } },
  });
  t.notOk(Object.hasOwn((first.data as { declaration: object }).declaration, 'class'), 'in per-application form');
  await sdk.deployApplications({ client, path, body: { A2: application('10.4.0.2') } as never });

  const listed = await sdk.listApplications({ client, path });
  t.same(Object.keys(listed.data as object).sort(), ['A1', 'A2', 'schemaVersion'], 'the earlier application is left as it was');
  t.match((await sdk.getApplication({ client, path: { ...path, application: 'A2' } })).data, { A2: { class: 'Application' } });
  t.match((await sdk.getApplication({ client, path: { ...path, application: 'A9' } })).error, {
    code: 404,
    message: "specified Application 'A9' not found in 'PerApp'",
  });

  const empty = await sdk.deployApplications({ client, path, body: { schemaVersion: '3.56.0' } as never });
  t.match(empty.error, { code: 422, errors: ['Per-app declaration must contain at least one application'] });
  const bad = await sdk.deployApplications({ client, path, body: { A3: { class: 'Application', S: { class: 'Service_HTTP' } } } as never });
  t.match(bad.error, { code: 422, errors: ["/PerApp/A3/S: should have required property 'virtualAddresses'"] });

  t.match((await sdk.deleteApplication({ client, path: { ...path, application: 'A1' } })).data, {
    results: [{ code: 200, tenant: 'PerApp' }],
  });
  t.same(Object.keys((await sdk.listApplications({ client, path })).data as object).sort(), ['A2', 'schemaVersion']);
  await sdk.deleteApplication({ client, path: { ...path, application: 'A2' } });
  t.equal((await sdk.listApplications({ client, path })).response?.status, 404, 'its last application removed: the tenant is gone');

  t.match((await sdk.updateDeploySettings({ client, body: { perAppDeploymentAllowed: false } })).data, { perAppDeploymentAllowed: false });
  const off = await sdk.deployApplications({ client, path, body: { A1: application('10.4.0.1') } as never });
  t.match(off.error, { code: 400, message: 'Error: Per-application deployment has been disabled on the settings endpoint' });
  t.equal((await sdk.listApplications({ client, path })).response?.status, 400);
});

t.test('settings: read, changed, validated, saved in the store', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  t.match((await sdk.getDeploySettings({ client })).data, {
    asyncTaskStorage: 'data-group',
    perAppDeploymentAllowed: true,
    burstHandlingEnabled: false,
  });
  const changed = await sdk.updateDeploySettings({
    client,
    body: { burstHandlingEnabled: true, betaOptions: { perAppDeploymentAllowed: false } },
  });
  t.match(changed.data, { burstHandlingEnabled: true, perAppDeploymentAllowed: false, serviceDiscoveryEnabled: true });
  t.same((await sdk.getDeploySettings({ client })).data, changed.data, 'answered as saved');

  const unknown = await sdk.updateDeploySettings({ client, body: { fastMode: true } as never });
  t.match(unknown.error, { code: 422, message: 'declaration is invalid', errors: [': should NOT have additional properties'] });
  const wrongType = await sdk.updateDeploySettings({ client, body: { burstHandlingEnabled: 'yes' } as never });
  t.match(wrongType.error, { code: 422, errors: ['/burstHandlingEnabled: should be boolean'] });
  const tracing = await sdk.updateDeploySettings({ client, body: { performanceTracingEnabled: true } });
  t.match(tracing.error, { code: 422, message: 'Performance tracing cannot be enabled unless the jaeger client is installed' });
  t.match(
    (await sdk.getDeploySettings({ client })).data,
    { burstHandlingEnabled: true, performanceTracingEnabled: false },
    'refusals change nothing',
  );
});
