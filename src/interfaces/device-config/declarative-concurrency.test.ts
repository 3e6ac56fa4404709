import t from 'tap';
import { isDeepStrictEqual } from 'node:util';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { ADMIN_PASSWORD, declaration, deviceClient } from './test-device.ts';

/** Declaration number `i` of tenant T: one service and pool on addresses only it uses (not loopback: nothing binds). */
const numbered = (i: number) =>
  declaration(
    'T',
    {
      S: { class: 'Service_HTTP', virtualAddresses: [`10.0.${i}.1`], pool: 'P' },
      P: { class: 'Pool', monitors: ['http'], members: [{ servicePort: 80, serverAddresses: [`192.0.2.${i}`] }] },
    },
    { id: `declaration-${i}` },
  );

/** What GET shows for declaration `i`'s tenant (the virtual port default filled in). */
const deployedTenant = (i: number) => {
  const tenant = structuredClone((numbered(i) as Record<string, any>).T);
  tenant.A1.S.virtualPort = 80;
  return tenant;
};

t.test('50 concurrent synchronous deployments to one tenant: one at a time, the rest 503, never a mix', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => sdk.deployDeclaration({ client, body: numbered(i) as never })));
  const statuses = answers.map((a) => a.response!.status);
  t.same(
    [...new Set(statuses)].filter((s) => s !== 200 && s !== 503),
    [],
    'every answer is 200 or 503',
  );
  t.ok(statuses.includes(200), 'at least one deployment ran');
  for (const answer of answers.filter((a) => a.response!.status === 503)) {
    t.match(answer.error, { code: 503, message: /^Configuration operation in progress on device .+, please try again in 2 minutes$/ });
  }
  const deployed = (await sdk.getDeclaration({ client })).data as Record<string, any>;
  const winners = answers.flatMap((a, i) => (a.response!.status === 200 ? [i] : []));
  const matching = winners.filter((i) => isDeepStrictEqual(deployedTenant(i), deployed.T));
  t.equal(matching.length, 1, 'the deployed tenant is exactly one of the accepted declarations');
});

t.test('50 asynchronous deployments queue and run one after another, in order; each task reports its result', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = deviceClient(system.url('device'));
  const submitted = [];
  for (let i = 0; i < 50; i++) submitted.push(await sdk.deployDeclaration({ client, query: { async: true }, body: numbered(i) as never }));
  t.ok(
    submitted.every((s) => s.response!.status === 202),
    'each is accepted at once with 202',
  );
  t.match(submitted[0]!.data, {
    id: /^[0-9a-f-]{36}$/,
    results: [{ code: 0, message: 'Declaration successfully submitted' }],
    declaration: {},
  });
  const busy = await sdk.deployDeclaration({ client, body: numbered(99) as never });
  const lastId = (submitted[49]!.data as { id: string }).id;
  let last = await sdk.getDeployTask({ client, path: { taskId: lastId } });
  while ((last.data as any).results[0].code === 0) last = await sdk.getDeployTask({ client, path: { taskId: lastId } });
  t.match(last.data, { id: lastId, results: [{ code: 200, message: 'success', tenant: 'T' }] }, 'the last task ends in success');
  t.ok([200, 503].includes(busy.response!.status), 'a synchronous deployment meanwhile is 503 or runs in its turn');
  const deployed = (await sdk.getDeclaration({ client })).data as Record<string, any>;
  // The synchronous one ran only if the queue had already drained: then it is the last one deployed.
  t.same(deployed.T, deployedTenant(busy.response!.status === 200 ? 99 : 49), 'the last one submitted is deployed');
  const tasks = await sdk.listDeployTasks({ client });
  t.ok((tasks.data?.items.length ?? 0) >= 50, 'every task is recorded');
  const unknown = await sdk.getDeployTask({ client, path: { taskId: '0b7f6d3c-1e2a-4c5b-8d9e-7f6a5b4c3d2e' } });
  t.same(unknown.error, { code: 404, message: 'No record found with ID of 0b7f6d3c-1e2a-4c5b-8d9e-7f6a5b4c3d2e' });
});
