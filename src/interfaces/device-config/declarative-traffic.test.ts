import t from 'tap';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { captureLogs } from '../../lib/test-logger.ts';
import { ADMIN_PASSWORD, declaration, deviceClient, freePort, serviceWithPool, startMember, through } from './test-device.ts';

t.test("the seed's behaviour note: a deployment replaces the tenant's whole configuration, and its services carry traffic", async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true });
  const client = deviceClient(system.url('device'));
  const [m1, m2, m3, m4] = await Promise.all(['m1', 'm2', 'm3', 'm4'].map((name) => startMember(t, name)));
  const [s1Port, s2Port] = [await freePort(), await freePort()];
  const first = serviceWithPool('S1', 'P1', s1Port, [m1!.port, m2!.port]);
  const second = serviceWithPool('S2', 'P2', s2Port, [m3!.port, m4!.port]);

  const deployed = await sdk.deployDeclaration({
    client,
    body: { class: 'AS3', action: 'deploy', persist: true, declaration: declaration('T', first) as never },
  });
  t.equal(deployed.response?.status, 200);
  t.match(deployed.data, { results: [{ code: 200, message: 'success', tenant: 'T', host: /./ }] });
  t.same(
    [await through(s1Port), await through(s1Port), await through(s1Port)].sort(),
    ['m1', 'm1', 'm2'],
    'S1 balances round robin over P1',
  );

  const replaced = await sdk.deployDeclaration({
    client,
    body: { class: 'AS3', action: 'deploy', persist: true, declaration: declaration('T', second) as never },
  });
  t.equal(replaced.response?.status, 200);
  t.equal(await through(s1Port), 'refused', 'S1 is gone: its port refuses');
  t.same([await through(s2Port), await through(s2Port)].sort(), ['m3', 'm4'], 'S2 serves traffic to P2');
  const now = await sdk.getDeclaration({ client });
  t.same(
    Object.keys((now.data as Record<string, any>).T.A1).sort(),
    ['S2', 'P2', 'class', 'template'].sort(),
    'only the new service and pool are deployed',
  );

  const both = await sdk.deployDeclaration({ client, body: declaration('T', { ...first, ...second }) as never });
  t.equal(both.response?.status, 200);
  t.same(
    [await through(s1Port), await through(s2Port)].map((body) => body.slice(0, 1)),
    ['m', 'm'],
    'one declaration with both keeps both',
  );

  const again = await sdk.deployDeclaration({ client, body: declaration('T', { ...first, ...second }) as never });
  t.match(again.data, { results: [{ code: 200, message: 'no change', tenant: 'T' }] }, 'the same declaration again changes nothing');

  const removed = await sdk.deleteTenantDeclaration({ client, path: { tenants: 'T' } });
  t.match(removed.data, { results: [{ message: 'success', tenant: 'T' }] });
  t.same([await through(s1Port), await through(s2Port)], ['refused', 'refused'], 'removing the tenant closes its listeners');
  t.equal((await sdk.getDeclaration({ client })).response?.status, 204, 'nothing deployed: 204');
});

t.test('replacing one tenant leaves the other tenants serving', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true });
  const client = deviceClient(system.url('device'));
  const [a, b] = await Promise.all([startMember(t, 'a'), startMember(t, 'b')]);
  const [pa, pb, pc] = [await freePort(), await freePort(), await freePort()];
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('Other', serviceWithPool('S', 'P', pa, [a.port])) as never })).response
      ?.status,
    200,
  );
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('T', serviceWithPool('S', 'P', pb, [b.port])) as never })).response?.status,
    200,
  );
  t.equal(await through(pa), 'a');
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('T', serviceWithPool('S', 'P', pc, [b.port])) as never })).response?.status,
    200,
  );
  t.same([await through(pa), await through(pb), await through(pc)], ['a', 'refused', 'b'], "the other tenant's service kept serving");
  const both = await sdk.getDeclaration({ client });
  t.same(
    Object.keys(both.data as object)
      .filter((k) => k === 'T' || k === 'Other')
      .sort(),
    ['Other', 'T'],
    'tenants the declaration does not name stay (selective)',
  );
});

t.test('a saved service whose port is taken at start stops only its own tenant; the others serve and deployments go on', async (t) => {
  const { system, config, stop } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true });
  const client = deviceClient(system.url('device'));
  const [a, b] = await Promise.all([startMember(t, 'a'), startMember(t, 'b')]);
  const [pa, pb, pc] = [await freePort(), await freePort(), await freePort()];
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('TA', serviceWithPool('S', 'P', pa, [a.port])) as never })).response?.status,
    200,
  );
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('TB', serviceWithPool('S', 'P', pb, [b.port])) as never })).response?.status,
    200,
  );
  await stop();

  const { createServer } = await import('node:http');
  const taken = createServer((_req, res) => res.end('squatter'));
  await new Promise<void>((resolve) => taken.listen(pa, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => taken.close(resolve)));

  const log = captureLogs('warn');
  const again = await startTestSystem(t, {
    config: { adminPassword: ADMIN_PASSWORD, database: config.database },
    fakeTimers: true,
    logger: log.logger,
  });
  t.match(
    log.text(),
    /"tenant":"TA".*cannot listen.*address in use.*stops serving/,
    'the start says which tenant could not listen and why',
  );
  const client2 = deviceClient(again.system.url('device'));
  t.equal(await through(pb), 'b', 'the other tenant serves');
  t.equal(await through(pa), 'squatter', 'the taken port is left to whoever has it');
  const unrelated = await sdk.deployDeclaration({
    client: client2,
    body: declaration('TC', serviceWithPool('S', 'P', pc, [b.port])) as never,
  });
  t.equal(unrelated.response?.status, 200, `an unrelated deployment still succeeds: ${JSON.stringify(unrelated.data ?? unrelated.error)}`);
  t.equal(await through(pc), 'b');
  await new Promise((resolve) => taken.close(resolve));
  const retried = await sdk.deployDeclaration({
    client: client2,
    body: declaration('TA', serviceWithPool('S', 'P', pa, [a.port])) as never,
  });
  t.match(
    retried.data,
    { results: [{ tenant: 'TA', message: 'success' }] },
    'deploying the stopped tenant again binds it (not "no change")',
  );
  t.equal(await through(pa), 'a');
});
