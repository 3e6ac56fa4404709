import t from 'tap';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { loadSpec } from '../../lib/spec-catalog.ts';
import { ADMIN_PASSWORD, deviceClient } from './test-device.ts';

/** Tenant `name` with one service on a non-loopback address (nothing binds) and its pool. */
const tenant = (name: string, address: string, extra: Record<string, unknown> = {}) => ({
  [name]: {
    class: 'Tenant',
    A1: {
      class: 'Application',
      S: { class: 'Service_HTTP', virtualAddresses: [address], pool: 'P', ...extra },
      P: { class: 'Pool', monitors: ['http'], members: [{ servicePort: 80, serverAddresses: ['192.0.2.200'] }] },
    },
  },
});
const adc = (...tenants: Record<string, unknown>[]) => Object.assign({ class: 'ADC', schemaVersion: '3.0.0', id: 'actions' }, ...tenants);
const deployed = async (client: ReturnType<typeof deviceClient>) => {
  const { data, response } = await sdk.getDeclaration({ client });
  return response?.status === 204
    ? []
    : Object.keys(data as object)
        .filter((k) => /^T\d$/.test(k))
        .sort();
};

t.test('actions and modes of a deployment', async (t) => {
  const { system, config, stop } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));

  const dry = await sdk.deployDeclaration({
    client,
    body: { class: 'AS3', action: 'dry-run', declaration: adc(tenant('T1', '10.1.0.1')) } as never,
  });
  t.match(
    dry.data,
    { dryRun: true, results: [{ code: 200, message: 'success', tenant: 'T1' }] },
    'a dry run reports what a deployment would do',
  );
  t.same(await deployed(client), [], 'and changes nothing');

  t.equal(
    (await sdk.deployDeclaration({ client, body: adc(tenant('T1', '10.1.0.1'), tenant('T2', '10.1.0.2')) as never })).response?.status,
    200,
  );
  const complete = await sdk.deployDeclaration({ client, query: { updateMode: 'complete' }, body: adc(tenant('T2', '10.1.0.2')) as never });
  t.match(
    complete.data,
    {
      results: [
        { tenant: 'T2', message: 'no change' },
        { tenant: 'T1', message: 'success' },
      ],
    },
    'complete mode removes the tenants it does not name',
  );
  t.same(await deployed(client), ['T2']);

  t.equal(
    (
      await sdk.deployDeclaration({
        client,
        body: { class: 'AS3', action: 'deploy', persist: false, declaration: adc(tenant('T3', '10.1.0.3')) } as never,
      })
    ).response?.status,
    200,
  );
  t.same(await deployed(client), ['T2', 'T3'], 'persist false changes the running configuration');

  const retrieved = await sdk.deployDeclaration({ client, body: { class: 'AS3', action: 'retrieve' } as never });
  t.same(
    Object.keys(retrieved.data as object)
      .filter((k) => /^T\d$/.test(k))
      .sort(),
    ['T2', 'T3'],
    'retrieve answers the deployed declaration',
  );

  const removed = await sdk.deployDeclaration({
    client,
    body: { class: 'AS3', action: 'remove', declaration: adc(tenant('T2', '10.1.0.2')) } as never,
  });
  t.match(removed.data, { results: [{ tenant: 'T2', message: 'success' }] }, 'remove takes away the tenants the declaration names');
  t.same(await deployed(client), ['T3']);

  await stop();
  const again = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, database: config.database } });
  t.same(
    await deployed(deviceClient(again.system.url('device'))),
    [],
    'after a restart the saved configuration is back: T3 was never saved, T2 was removed',
  );
});

t.test('what fails, and how', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));

  const invalid = await sdk.deployDeclaration({
    client,
    body: adc({
      T1: { class: 'Tenant', A1: { class: 'Application', S: { class: 'Service_HTTP', pool: 'P', virtualPort: 70000 } } },
    }) as never,
  });
  t.equal(invalid.response?.status, 422);
  t.same(
    invalid.error,
    {
      code: 422,
      message: 'declaration is invalid',
      errors: ["/T1/A1/S: should have required property 'virtualAddresses'", '/T1/A1/S/virtualPort: should be <= 65535'],
    },
    'every schema problem, each with its pointer',
  );

  const badMonitor = adc(tenant('T1', '10.2.0.1'), {
    T2: { class: 'Tenant', A1: { class: 'Application', S: { class: 'Service_HTTP', virtualAddresses: ['10.2.0.2'], pool: 'missing' } } },
  });
  const mixed = await sdk.deployDeclaration({ client, body: badMonitor as never });
  t.equal(mixed.response?.status, 207, 'one tenant deployed, one failed');
  t.match(mixed.data, {
    results: [
      { tenant: 'T1', message: 'success' },
      { tenant: 'T2', code: 422, message: 'declaration failed', response: /^\/T2\/A1\/S\/pool: / },
    ],
  });

  const taken = await sdk.deployDeclaration({ client, body: adc(tenant('T3', '10.2.0.1')) as never });
  t.equal(taken.response?.status, 422, 'an address and port another tenant serves fails the later tenant');
  t.match(taken.error, { message: 'declaration failed', results: [{ tenant: 'T3', response: /10\.2\.0\.1.*80.*\/T1\/A1\/S/ }] });

  const spec = loadSpec('device-config') as any;
  const real = spec.paths['/mgmt/shared/appsvcs/declare'].post.requestBody.content['application/json'].examples.realDeclaration.value;
  const expected = spec.paths['/mgmt/shared/appsvcs/declare'].post.responses['200'].content['application/json'].examples.withWarnings.value;
  const accepted = await sdk.deployDeclaration({ client, body: real });
  t.equal(accepted.response?.status, 200, "the real extension's own kind of declaration is accepted");
  t.same(
    (accepted.data as any).results[0].warnings,
    expected.results[0].warnings,
    'and what is not modelled is listed, as the spec example says',
  );
  const kept = (await sdk.getTenantDeclaration({ client, path: { tenants: 'Web_Prod' } })).data as any;
  t.same(kept.Web_Prod.App_1.health_monitor, real.declaration.Web_Prod.App_1.health_monitor, 'unmodelled members are kept as given');
  t.same(kept.Web_Prod.App_1.serviceMain.profileHTTP, { bigip: '/Common/http' }, 'and unmodelled properties');
});

t.test('persist false, then the same declaration with persist true: it is saved (answered no change)', async (t) => {
  const { system, config, stop } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const body = (persist: boolean) => ({ class: 'AS3', action: 'deploy', persist, declaration: adc(tenant('T1', '10.3.0.1')) }) as never;
  t.match((await sdk.deployDeclaration({ client, body: body(false) })).data, { results: [{ message: 'success' }] });
  t.match((await sdk.deployDeclaration({ client, body: body(true) })).data, { results: [{ message: 'no change' }] });
  const retrieve = await sdk.deployDeclaration({ client, body: { class: 'AS3', action: 'retrieve' } as never });
  const tasks = (await sdk.listDeployTasks({ client })).data!.items;
  t.match(
    tasks[0],
    { results: [{ code: 200, message: 'success' }], declaration: { T1: { class: 'Tenant' } } },
    'a retrieve leaves a record with the declaration it answered',
  );
  t.equal(retrieve.response?.status, 200);
  await stop();
  const again = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, database: config.database } });
  t.same(await deployed(deviceClient(again.system.url('device'))), ['T1'], 'saved: back after a restart');
});

t.test('an invalid member name is reported once, and nothing below it repeats it', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const name = 'secret password=hunter2';
  const answer = await sdk.deployDeclaration({
    client,
    body: adc({ [name]: { class: 'Tenant', A1: { class: 'Application', S: { class: 'Service_HTTP' } } } }) as never,
  });
  t.equal(answer.response?.status, 422);
  const errors = (answer.error as { errors: string[] }).errors;
  t.equal(errors.filter((e) => e.includes('hunter2')).length, 1, `one error names it: ${JSON.stringify(errors)}`);
  const removed = await sdk.deleteDeclaration({ client });
  t.same(
    removed.data,
    { results: [{ code: 200, message: 'no change', host: (removed.data as any).results[0].host, runTime: 0 }], declaration: {} },
    'removing with nothing ever deployed: no change, an empty declaration',
  );
});
