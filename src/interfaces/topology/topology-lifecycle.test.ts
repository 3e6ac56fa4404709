import t from 'tap';
import { createClient } from '../../../generated/topology/client/index.ts';
import * as sdk from '../../../generated/topology/sdk.gen.ts';
import type { TaskRecord } from '../../../generated/topology/types.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { findFreePorts } from '../../lib/free-ports.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { startTcpProxy } from '../../stores/test-tcp-proxy.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { renamedRequest } from './test-topology.ts';

const ADMIN_PASSWORD = 'central admin pw';
type Client = ReturnType<typeof createClient>;

/** The whole system, its device reached through a proxy the test can cut (inventory: `dev1`). */
async function startWithProxiedDevice(t: TapTest, database?: string) {
  const [devicePort] = await findFreePorts(1);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: devicePort! });
  t.teardown(() => proxy.close());
  const { system } = await startTestSystem(t, {
    config: {
      adminPassword: ADMIN_PASSWORD,
      ports: { device: devicePort } as never,
      centralDevices: `dev1=http://admin:${encodeURIComponent(ADMIN_PASSWORD)}@127.0.0.1:${proxy.port}`,
      ...(database ? { database } : {}),
    },
  });
  const login = await sdk.loginManagementUser({
    client: createClient({ baseUrl: system.url('central') }),
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
  });
  const client = createClient({ baseUrl: system.url('central'), headers: { 'X-Vendor-Auth-Token': login.data!.token.token } });
  return { system, proxy, client };
}

/** The spec's example renamed: topology, policy, SSL settings, chain and service get `suffix`. */
const request = (suffix: string, target = 'dev1') => renamedRequest(suffix, [target]);

async function settled(client: Client, taskId: string): Promise<TaskRecord> {
  for (let polls = 0; polls < 1500; polls++) {
    const read = await sdk.getTopologyTask({ client, path: { taskId } });
    if (read.data?.status !== 'STARTED') return read.data!;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`task ${taskId} stayed STARTED`);
}

/** Concurrent creates of one name on a store: exactly one is accepted. */
async function raceCreates(t: TapTest, database?: string) {
  const { client } = await startWithProxiedDevice(t, database);
  const body = await request('race');
  const answers = await Promise.all(Array.from({ length: 10 }, () => sdk.createTopology({ client, body })));
  const statuses = answers.map((a) => a.response?.status);
  t.equal(statuses.filter((s) => s === 202).length, 1, 'one 202');
  t.equal(statuses.filter((s) => s === 409).length, 9, 'the others 409');
  for (const refused of answers.filter((a) => a.response?.status === 409))
    t.equal(refused.error?.message, "Topology 'sslo_race' already exists.");
  const winner = answers.find((a) => a.response?.status === 202)!;
  t.equal((await settled(client, winner.data!.id)).status, 'FINISHED');
}

t.test('concurrent creates of one topology name: exactly one is accepted (embedded store)', (t) => raceCreates(t));
t.test('concurrent creates of one topology name: exactly one is accepted (PostgreSQL)', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await raceCreates(t, url);
});

t.test(
  'identical objects are reused, a different definition under a name is 409, a failed deployment removes what it created and the request can be sent again',
  async (t) => {
    const { client, proxy } = await startWithProxiedDevice(t);
    const first = await sdk.createTopology({ client, body: await request('one') });
    t.equal((await settled(client, first.data!.id)).status, 'FINISHED');

    // A second topology sharing the SSL settings, chain and service of the first (same definitions).
    const shared = await request('one');
    shared.template.TOPOLOGY.name = 'sslo_two';
    shared.template.TOPOLOGY.securityPolicy = 'policy_two';
    shared.template.SECURITY_POLICY.name = 'policy_two';
    const second = await sdk.createTopology({ client, body: shared });
    t.equal(second.response?.status, 202, 'reused');
    t.equal((await settled(client, second.data!.id)).status, 'FINISHED');
    const chain = await sdk.getServiceChain({ client, path: { chainName: 'chain_one' } });
    t.same(chain.data?.usedBy, ['policy_one', 'policy_two'], 'both policies use the one chain');

    const different = await request('one');
    different.template.TOPOLOGY.name = 'sslo_three';
    different.template.TOPOLOGY.securityPolicy = 'policy_three';
    different.template.SECURITY_POLICY.name = 'policy_three';
    different.template.SERVICE.service1!.customService.loadBalancing.devices[0]!.port = '1345';
    const conflict = await sdk.createTopology({ client, body: different });
    t.equal(conflict.response?.status, 409);
    t.equal(
      conflict.error?.message,
      "Service 'icap_one' already exists with a different definition; use another name or the same definition.",
    );
    t.equal(
      (await sdk.getTopology({ client, path: { topologyName: 'sslo_three' } })).response?.status,
      404,
      'nothing of the refused request was kept',
    );
    t.equal((await sdk.getSecurityPolicy({ client, path: { securityPolicyName: 'policy_three' } })).response?.status, 404);

    // The device cannot be reached: the task fails with the reason and takes back what it created.
    await proxy.pause('refuse');
    const failing = await sdk.createTopology({ client, body: await request('four') });
    t.equal(failing.response?.status, 202);
    const failed = await settled(client, failing.data!.id);
    t.equal(failed.status, 'FAILED');
    t.match(failed.message, /^Deployment to dev1 failed: .*could not be reached/);
    t.notMatch(failed.message, /may still be on/, 'nothing reached the device, so the task names nothing as left there');
    for (const read of [
      sdk.getTopology({ client, path: { topologyName: 'sslo_four' } }),
      sdk.getSslSettings({ client, path: { sslSettingsName: 'ssl_four' } }),
      sdk.getService({ client, path: { serviceName: 'icap_four' } }),
    ])
      t.equal((await read).response?.status, 404, 'removed from the management system');
    await proxy.resume();
    const retried = await sdk.createTopology({ client, body: await request('four') });
    t.equal(retried.response?.status, 202, 'the same request again');
    t.equal((await settled(client, retried.data!.id)).status, 'FINISHED');

    // A delete that cannot reach the device: 503 naming it, the topology stays; then it goes.
    await proxy.pause('refuse');
    const unreachable = await sdk.deleteTopology({ client, path: { topologyName: 'sslo_four' } });
    t.equal(unreachable.response?.status, 503);
    t.match(
      unreachable.error?.message,
      /^Device 'dev1' could not remove 'ssloT_sslo_four', 'ssloP_policy_four': .*send the delete again\.$/,
    );
    t.equal((await sdk.getTopology({ client, path: { topologyName: 'sslo_four' } })).response?.status, 200, 'still there');
    await proxy.resume();
    t.equal((await sdk.deleteTopology({ client, path: { topologyName: 'sslo_four' } })).response?.status, 204);

    // A topology whose task is still STARTED cannot be deleted (the device hangs).
    await proxy.pause('hold');
    const hanging = await sdk.createTopology({ client, body: await request('five') });
    const refusedDelete = await sdk.deleteTopology({ client, path: { topologyName: 'sslo_five' } });
    t.equal(refusedDelete.response?.status, 409);
    t.equal(
      refusedDelete.error?.message,
      `Topology 'sslo_five' is being deployed by task ${hanging.data!.id}; delete it when the task has ended.`,
    );
    // Its objects may still be undone: another topology may not reuse them yet.
    const reuser = await request('five');
    reuser.template.TOPOLOGY.name = 'sslo_six';
    reuser.template.TOPOLOGY.securityPolicy = 'policy_six';
    reuser.template.SECURITY_POLICY.name = 'policy_six';
    const early = await sdk.createTopology({ client, body: reuser });
    t.equal(early.response?.status, 409);
    t.equal(early.error?.message, `SSL settings 'ssl_five' is being created by task ${hanging.data!.id}; try again when it has ended.`);
    await proxy.resume(); // cuts the held connection: the task ends FAILED
    t.equal((await settled(client, hanging.data!.id)).status, 'FAILED');
    t.equal(
      (await sdk.deleteTopology({ client, path: { topologyName: 'sslo_five' } })).response?.status,
      404,
      'the failed task took it back',
    );

    // An object being deleted (its device hangs) is not reused meanwhile; a delete that fails lifts the mark.
    const seven = await sdk.createTopology({ client, body: await request('seven') });
    t.equal((await settled(client, seven.data!.id)).status, 'FINISHED');
    t.equal((await sdk.deleteTopology({ client, path: { topologyName: 'sslo_seven' } })).response?.status, 204);
    await proxy.pause('hold');
    const deleting = sdk.deleteServiceChain({ client, path: { chainName: 'chain_seven' } });
    const again = await request('seven');
    again.template.TOPOLOGY.name = 'sslo_eight';
    again.template.TOPOLOGY.securityPolicy = 'policy_eight';
    again.template.SECURITY_POLICY.name = 'policy_eight';
    let refused: Awaited<ReturnType<typeof sdk.createTopology>> | undefined;
    for (let tries = 0; tries < 1500; tries++) {
      refused = await sdk.createTopology({ client, body: again });
      if (refused.response?.status === 409) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(
      (refused as { error?: { message?: string } } | undefined)?.error?.message,
      "Service chain 'chain_seven' is being deleted; try again when the delete has ended.",
    );
    await proxy.resume();
    t.equal((await deleting).response?.status, 503, 'the device was cut off: the chain stays');
    const reused = await sdk.createTopology({ client, body: again });
    t.equal(reused.response?.status, 202, 'the mark is lifted');
    t.equal((await settled(client, reused.data!.id)).status, 'FINISHED');
  },
);

t.test('every problem of a request in one 400, nothing created, nothing long repeated', async (t) => {
  const { client } = await startWithProxiedDevice(t);
  const body = await request('bad', 'nowhere.example.net');
  body.template.TOPOLOGY.sslSetting = 'ssl_missing';
  body.template.SECURITY_POLICY.rules[2]!.conditions = [{ type: 'SSL Check', options: { ssl: true } }];
  body.template.SERVICE_CHAIN.chain1!.orderedServiceList[0]!.name = 'x'.repeat(5000);
  const refused = await sdk.createTopology({ client, body });
  t.equal(refused.response?.status, 400);
  const errors = (refused.error as { errors?: { pointer: string; message: string }[] }).errors ?? [];
  t.ok(errors.length >= 4, `${errors.length} problems`);
  t.match(refused.error?.message, /^Invalid topology request: \d+ problems\.$/);
  for (const pointer of [
    '/template/TOPOLOGY/sslSetting',
    '/template/SECURITY_POLICY/rules/2/conditions',
    '/template/SERVICE_CHAIN/chain1/orderedServiceList/0/name',
    '/targetList/0/name',
  ]) {
    t.ok(
      errors.some((e) => e.pointer === pointer),
      `a problem at ${pointer}`,
    );
  }
  t.ok(JSON.stringify(refused.error).length < 4000, 'the answer stays short');
  t.equal((await sdk.getSslSettings({ client, path: { sslSettingsName: 'ssl_bad' } })).response?.status, 404, 'nothing created');
});
