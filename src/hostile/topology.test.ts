// Hostile cases of the management system (B): devices that fail a deployment or a delete in every way a
// network lets them (refused, half applied, answer lost, gone from the inventory, the management system
// killed before it read the answer). What it records must be what reached the device, a delete must
// never be blocked for good, and a FAILED task must not name a device that nothing reached.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createClient } from '../../generated/topology/client/index.ts';
import * as sdk from '../../generated/topology/sdk.gen.ts';
import type { TaskRecord, TopologyRequest } from '../../generated/topology/types.gen.ts';
import { startTestSystem, tempSqliteUrl } from '../app/test-system.ts';
import { createFakeClock } from '../lib/clock.ts';
import { findFreePorts } from '../lib/free-ports.ts';
import type { TapTest } from '../lib/tap-test.ts';
import type { Database } from '../stores/database.ts';
import { openDatabase } from '../stores/open-database.ts';
import { withTestPostgres } from '../stores/test-postgres.ts';
import { TOPOLOGY_MIGRATIONS } from '../interfaces/topology/migrations.ts';
import { startDeviceFront } from '../interfaces/topology/test-device-front.ts';
import { createFakeDevices, down, losesAnswer, refusesTenants, works, type FakeDevices } from '../interfaces/topology/test-fake-devices.ts';
import { renamedRequest } from '../interfaces/topology/test-topology.ts';
import { createTopologyService, type TopologyService } from '../interfaces/topology/topology-service.ts';
import type { ObjectKind } from '../interfaces/topology/topology-plan.ts';

const ADMIN_PASSWORD = 'hostile central pw';
type Client = ReturnType<typeof createClient>;

const request = renamedRequest;

/** A second topology `sslo_two` reusing every object of `sslo_one` (its policy too), to `targets`. */
async function reusingOne(targets: readonly string[]): Promise<TopologyRequest> {
  const body = await request('one', targets);
  body.template.TOPOLOGY.name = 'sslo_two';
  return body;
}

type Engine = 'embedded store' | 'PostgreSQL';
const ENGINES: readonly Engine[] = ['embedded store', 'PostgreSQL'];

const ONE = {
  topology: 'ssloT_sslo_one',
  policy: 'ssloP_policy_one',
  ssl: 'ssloL_ssl_one',
  chain: 'ssloC_chain_one',
  service: 'ssloS_icap_one',
};
const ALL_OF_ONE = Object.values(ONE).sort();
const SHARED_OF_ONE = [ONE.chain, ONE.ssl, ONE.service].sort();

// ---------------------------------------------------------------------------------------------------
// Over HTTP: the whole system, its device role as `dev1`, a second device behind a front that fails.

/** Central and its local device role (`dev1`) on `database`, the inventory naming `devices` besides. */
async function startCentral(t: TapTest, options: { database: string; others: Readonly<Record<string, string>> }) {
  const [devicePort] = await findFreePorts(1);
  const withCredentials = (url: string) => url.replace('http://', `http://admin:${encodeURIComponent(ADMIN_PASSWORD)}@`);
  const inventory = { dev1: `http://127.0.0.1:${devicePort}`, ...options.others };
  const { system, stop } = await startTestSystem(t, {
    config: {
      adminPassword: ADMIN_PASSWORD,
      ports: { device: devicePort } as never,
      centralDevices: Object.entries(inventory)
        .map(([hostname, url]) => `${hostname}=${withCredentials(url)}`)
        .join(','),
      database: options.database,
    },
  });
  const login = await sdk.loginManagementUser({
    client: createClient({ baseUrl: system.url('central') }),
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
  });
  const client = createClient({ baseUrl: system.url('central'), headers: { 'X-Vendor-Auth-Token': login.data!.token.token } });
  return { client, stop, dev1: system.url('device') };
}

/** A device role of its own (own store), for `dev2`. */
async function startSecondDevice(t: TapTest) {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, roles: ['device'], deviceHostname: 'dev2' } });
  return system.url('device');
}

/** The sslo tenants a device holds, read over its own REST. */
async function tenantsOn(deviceUrl: string): Promise<string[]> {
  const login = await fetch(`${deviceUrl}/mgmt/shared/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'tmos' }),
  });
  const token = ((await login.json()) as { token: { token: string } }).token.token;
  const declared = await fetch(`${deviceUrl}/mgmt/shared/appsvcs/declare`, { headers: { 'x-vendor-auth-token': token } });
  if (declared.status === 204) return [];
  return Object.keys((await declared.json()) as object)
    .filter((key) => key.startsWith('sslo'))
    .sort();
}

async function deployed(client: Client, body: TopologyRequest): Promise<TaskRecord> {
  const created = await sdk.createTopology({ client, body });
  if (created.response?.status !== 202) throw new Error(`create answered ${created.response?.status}: ${created.error?.message}`);
  for (let polls = 0; polls < 1500; polls++) {
    const read = await sdk.getTopologyTask({ client, path: { taskId: created.data!.id } });
    if (read.data?.status !== 'STARTED') return read.data!;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the task stayed STARTED');
}

/** Reads of the objects `sslo_two` reused: where each is recorded. */
async function placesOfShared(client: Client) {
  const reads = [
    sdk.getSecurityPolicy({ client, path: { securityPolicyName: 'policy_one' } }),
    sdk.getServiceChain({ client, path: { chainName: 'chain_one' } }),
    sdk.getSslSettings({ client, path: { sslSettingsName: 'ssl_one' } }),
    sdk.getService({ client, path: { serviceName: 'icap_one' } }),
  ];
  return (await Promise.all(reads)).map((read) => ({ devices: read.data?.devices, unconfirmedDevices: read.data?.unconfirmedDevices }));
}

/** Deletes in the seed's order; returns each answer's status and body. */
async function deleteAllOfOne(client: Client) {
  const answers = [];
  for (const remove of [
    () => sdk.deleteTopology({ client, path: { topologyName: 'sslo_one' } }),
    () => sdk.deleteServiceChain({ client, path: { chainName: 'chain_one' } }),
    () => sdk.deleteSslSettings({ client, path: { sslSettingsName: 'ssl_one' } }),
    () => sdk.deleteService({ client, path: { serviceName: 'icap_one' } }),
  ]) {
    const answer = await remove();
    answers.push({
      status: answer.response?.status,
      body: (answer.data ?? answer.error) as { message?: string; skippedDevices?: unknown } | undefined,
    });
  }
  return answers;
}

async function unreachedDeviceScenario(t: TapTest, database: string) {
  const [deadPort] = await findFreePorts(1);
  const { client, dev1 } = await startCentral(t, { database, others: { dev2: `http://127.0.0.1:${deadPort}` } });
  t.equal((await deployed(client, await request('one', ['dev1']))).status, 'FINISHED');

  const failed = await deployed(client, await reusingOne(['dev1', 'dev2']));
  t.equal(failed.status, 'FAILED');
  t.match(failed.message, /^Deployment to dev2 failed: .*could not be reached/);
  t.notMatch(failed.message, /may still be on/, 'nothing reached dev2, and nothing of the task is left on dev1: the task names no device');
  t.same(
    await placesOfShared(client),
    Array(4).fill({ devices: ['dev1'], unconfirmedDevices: [] }),
    'the reused objects are recorded where they are: dev1 only',
  );
  t.same(await tenantsOn(dev1), ALL_OF_ONE, 'dev1 holds sslo_one, nothing of sslo_two');

  const answers = await deleteAllOfOne(client);
  t.same(
    answers.map((a) => a.status),
    [204, 204, 204, 204],
    'the topology, then the chain, SSL settings and service are deleted at once',
  );
  t.same(await tenantsOn(dev1), [], 'and left dev1');
}

/** A fresh store of `engine` for a system (undefined: PostgreSQL is not there, the test is skipped). */
async function systemStore(t: TapTest, engine: Engine): Promise<string | undefined> {
  return engine === 'embedded store' ? tempSqliteUrl(t).url : withTestPostgres(t);
}

for (const engine of ENGINES) {
  t.test(
    `B-unreached-device-not-recorded: a deployment of reused objects that cannot reach its second device records nothing there, names nothing as left there, and every delete then works (${engine})`,
    async (t) => {
      const database = await systemStore(t, engine);
      if (database) await unreachedDeviceScenario(t, database);
    },
  );
}

async function droppedDeviceScenario(t: TapTest, database: string) {
  const dev2 = await startSecondDevice(t);
  const front = await startDeviceFront(dev2);
  t.teardown(() => front.close());
  const first = await startCentral(t, { database, others: { dev2: front.url } });
  t.equal((await deployed(first.client, await request('one', ['dev1', 'dev2']))).status, 'FINISHED');
  t.same(await tenantsOn(dev2), ALL_OF_ONE, 'sslo_one is on dev2 too');

  await front.set('refuse');
  const failed = await deployed(first.client, await reusingOne(['dev1', 'dev2']));
  t.equal(failed.status, 'FAILED');
  t.notMatch(failed.message, /may still be on/, 'no false claim about dev2');

  // dev2 holds sslo_one's tenants for real: while it is in the inventory, the delete waits for it.
  const blocked = await sdk.deleteTopology({ client: first.client, path: { topologyName: 'sslo_one' } });
  t.equal(blocked.response?.status, 503);
  t.match(
    blocked.error?.message,
    /^Device 'dev2' could not remove 'ssloT_sslo_one', 'ssloP_policy_one': .*Topology 'sslo_one' was not deleted \(its tenants already left 'dev1'\); send the delete again\.$/,
  );
  const half = await sdk.getTopology({ client: first.client, path: { topologyName: 'sslo_one' } });
  t.same(half.data?.devices, ['dev2'], 'recorded only where its tenants still are');
  t.same(await tenantsOn(first.dev1), SHARED_OF_ONE, 'dev1 no longer holds the topology or its policy');

  // dev2 is dropped from the inventory: central restarts with a setting that no longer names it.
  await first.stop();
  const second = await startCentral(t, { database, others: {} });
  const answers = await deleteAllOfOne(second.client);
  t.same(
    answers.map((a) => a.status),
    [200, 200, 200, 200],
    'no delete is blocked by a device no longer in the inventory',
  );
  t.same(answers[0]!.body?.skippedDevices, [{ hostname: 'dev2', tenants: [ONE.topology, ONE.policy] }]);
  t.equal(
    answers[0]!.body?.message,
    "Topology 'sslo_one' was deleted. Device 'dev2' is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES), so it was not asked to remove 'ssloT_sslo_one', 'ssloP_policy_one'; they may still be there.",
  );
  t.same(
    answers.slice(1).map((a) => a.body?.skippedDevices),
    [
      [{ hostname: 'dev2', tenants: [ONE.chain] }],
      [{ hostname: 'dev2', tenants: [ONE.ssl] }],
      [{ hostname: 'dev2', tenants: [ONE.service] }],
    ],
  );
  t.equal(
    (await sdk.getServiceChain({ client: second.client, path: { chainName: 'chain_one' } })).response?.status,
    404,
    'gone from the management system',
  );
  t.same(await tenantsOn(second.dev1), [], 'and from dev1');
}

for (const engine of ENGINES) {
  t.test(
    `B-dropped-device-skipped-on-delete: a device dropped from the inventory does not block deletes (200 naming it and what may be left there); while listed and down it is a 503 that leaves the records where the tenants are (${engine})`,
    async (t) => {
      const database = await systemStore(t, engine);
      if (database) await droppedDeviceScenario(t, database);
    },
  );
}

t.test(
  'B-lost-deploy-answer-recorded-unconfirmed: a deployment the device applied but whose answer was lost is recorded as maybe there, and the deletes remove it there',
  async (t) => {
    const dev2 = await startSecondDevice(t);
    const front = await startDeviceFront(dev2);
    t.teardown(() => front.close());
    const { client, dev1 } = await startCentral(t, { database: tempSqliteUrl(t).url, others: { dev2: front.url } });
    t.equal((await deployed(client, await request('one', ['dev1']))).status, 'FINISHED');

    await front.set('lose-deploy-answers');
    const failed = await deployed(client, await reusingOne(['dev1', 'dev2']));
    t.equal(failed.status, 'FAILED');
    t.equal(front.lostAnswers, 1, 'the deployment reached dev2; its answer did not come back');
    t.notMatch(failed.message, /may still be on/, 'the undo removed sslo_two from both devices, and said so');
    t.same(await tenantsOn(dev2), [ONE.chain, ONE.ssl, ONE.policy, ONE.service].sort(), 'the reused objects did arrive on dev2');
    t.same(
      await placesOfShared(client),
      Array(4).fill({ devices: ['dev1'], unconfirmedDevices: ['dev2'] }),
      'recorded as maybe on dev2, not as confirmed',
    );

    await front.set('pass');
    t.same(
      (await deleteAllOfOne(client)).map((a) => a.status),
      [204, 204, 204, 204],
    );
    t.same(await tenantsOn(dev2), [], 'the deletes removed what arrived unconfirmed');
    t.same(await tenantsOn(dev1), []);
  },
);

// ---------------------------------------------------------------------------------------------------
// The service on each store, its devices in memory: the failures a real device shows only by chance.

async function openStore(t: TapTest, engine: Engine): Promise<Database | undefined> {
  const url = engine === 'embedded store' ? 'sqlite::memory:' : await withTestPostgres(t);
  if (!url) return undefined;
  const db = await openDatabase(url, { migrations: TOPOLOGY_MIGRATIONS });
  t.teardown(() => db.close());
  return db;
}

function centralOn(db: Database, fake: FakeDevices): TopologyService {
  return createTopologyService({
    db,
    clock: createFakeClock(),
    logger: pino({ level: 'silent' }),
    inventory: fake.inventory,
    devices: fake.client,
    newTaskId: randomUUID,
    enqueueDeployment: async () => {},
  });
}

/** Creates and runs the task (as its job would); the task as it ended, or as it stayed when the run was cut. */
async function run(service: TopologyService, body: TopologyRequest, signal = new AbortController().signal) {
  const created = await service.create(body);
  if (!created.ok) throw new Error(created.error.message);
  await service.deploy(created.value.id, signal).catch((error: unknown) => {
    if (!signal.aborted) throw error;
  });
  return (await service.task(created.value.id))!;
}

const KINDS: readonly [ObjectKind, string, string][] = [
  ['topology', 'sslo_one', ONE.topology],
  ['policy', 'policy_one', ONE.policy],
  ['chain', 'chain_one', ONE.chain],
  ['ssl', 'ssl_one', ONE.ssl],
  ['service', 'icap_one', ONE.service],
];

/** Records and devices agree: a tenant on a device is recorded there (or as maybe), and a confirmed record has its tenant. */
async function agree(t: TapTest, service: TopologyService, fake: FakeDevices, hostnames: readonly string[]) {
  for (const [kind, name, tenant] of KINDS) {
    const read = await service.read(kind, name);
    for (const hostname of hostnames) {
      const there = fake.device(hostname).tenants.has(tenant);
      if (!read) {
        t.notOk(there, `${tenant} is on ${hostname} only while ${name} is recorded`);
        continue;
      }
      if (there) t.ok([...read.devices, ...read.unconfirmedDevices].includes(hostname), `${tenant} on ${hostname} is recorded there`);
      if (read.devices.includes(hostname)) t.ok(there, `${name} recorded as confirmed on ${hostname} is there`);
    }
  }
}

for (const engine of ENGINES) {
  t.test(
    `B-partial-deploy-recorded-per-tenant: a device that applies some tenants and refuses others gets records for exactly those it applied (${engine})`,
    async (t) => {
      const db = await openStore(t, engine);
      if (!db) return;
      const fake = createFakeDevices(['dev1', 'dev2']);
      const service = centralOn(db, fake);
      t.equal((await run(service, await request('one', ['dev1']))).status, 'FINISHED');

      fake.device('dev2').behaviour = refusesTenants('ssloC_');
      const failed = await run(service, await reusingOne(['dev1', 'dev2']));
      t.equal(failed.status, 'FAILED');
      t.match(failed.message, /^Deployment to dev2 failed: the device refused ssloC_/);
      t.notMatch(failed.message, /may still be on/);
      t.same((await service.read('chain', 'chain_one'))?.devices, ['dev1'], 'the chain dev2 refused is not recorded there');
      t.same((await service.read('service', 'icap_one'))?.devices, ['dev1', 'dev2'], 'the service dev2 applied is');
      await agree(t, service, fake, ['dev1', 'dev2']);

      fake.device('dev2').behaviour = works;
      for (const [kind, name] of KINDS.filter(([kind]) => kind !== 'policy'))
        t.ok((await service.remove(kind, name)).ok, `${name} deleted`);
      t.same([fake.tenantsOn('dev1'), fake.tenantsOn('dev2')], [[], []], 'nothing is left on either device');
    },
  );

  t.test(
    `B-half-done-delete-consistent: a delete that one device completes and another fails (wholly or for one tenant) leaves records where the tenants are, and is completed when sent again (${engine})`,
    async (t) => {
      const db = await openStore(t, engine);
      if (!db) return;
      const fake = createFakeDevices(['dev1', 'dev2']);
      const service = centralOn(db, fake);
      t.equal((await run(service, await request('one', ['dev1', 'dev2']))).status, 'FINISHED');

      fake.device('dev2').behaviour = down;
      const refused = await service.remove('topology', 'sslo_one');
      t.same(refused.ok ? undefined : refused.error, {
        code: 'deviceUnavailable',
        message:
          "Device 'dev2' could not remove 'ssloT_sslo_one', 'ssloP_policy_one': the device could not be reached (ECONNREFUSED). Topology 'sslo_one' was not deleted (its tenants already left 'dev1'); send the delete again.",
      });
      t.same((await service.read('topology', 'sslo_one'))?.devices, ['dev2']);
      await agree(t, service, fake, ['dev1', 'dev2']);

      // dev2 removes the topology's tenant but refuses its policy's: only the policy's tenant is named, and stays recorded.
      fake.device('dev2').behaviour = refusesTenants('ssloP_');
      const partly = await service.remove('topology', 'sslo_one');
      t.match(partly.ok ? '' : partly.error.message, /^Device 'dev2' could not remove 'ssloP_policy_one': /);
      t.same(
        [(await service.read('topology', 'sslo_one'))?.devices, (await service.read('policy', 'policy_one'))?.devices],
        [[], ['dev2']],
      );
      await agree(t, service, fake, ['dev1', 'dev2']);

      fake.device('dev2').behaviour = works;
      const done = await service.remove('topology', 'sslo_one');
      t.same(done.ok && done.value.skippedDevices, [], 'sent again when dev2 is back: deleted');
      t.same(fake.tenantsOn('dev2'), SHARED_OF_ONE);
      await agree(t, service, fake, ['dev1', 'dev2']);
    },
  );

  t.test(
    `B-device-dropped-during-task: a device dropped from the inventory while a task deploys fails the task without naming it, and does not block deletes (${engine})`,
    async (t) => {
      const db = await openStore(t, engine);
      if (!db) return;
      const fake = createFakeDevices(['dev1', 'dev2']);
      const service = centralOn(db, fake);
      t.equal((await run(service, await request('one', ['dev1', 'dev2']))).status, 'FINISHED');

      // While dev1 deploys sslo_two, dev2 leaves the inventory (a restart with another setting).
      fake.device('dev1').behaviour = (call, device) => {
        fake.drop('dev2');
        return works(call, device);
      };
      const failed = await run(service, await reusingOne(['dev1', 'dev2']));
      fake.device('dev1').behaviour = works;
      t.equal(failed.status, 'FAILED');
      t.equal(
        failed.message,
        'Deployment to dev2 failed: the device is no longer in the inventory (PORTOLAN_CENTRAL_DEVICES).',
        'dev1 undid sslo_two; nothing of it reached dev2',
      );
      t.same(fake.tenantsOn('dev1'), ALL_OF_ONE);

      const deleted = await service.remove('topology', 'sslo_one');
      t.same(deleted.ok && deleted.value.skippedDevices, [{ hostname: 'dev2', tenants: [ONE.topology, ONE.policy] }]);
      t.same(
        fake.device('dev2').calls.filter((c) => c.op === 'remove'),
        [],
        'dev2 was never asked',
      );
      for (const [kind, name] of KINDS.slice(2)) t.ok((await service.remove(kind, name)).ok, `${name} deleted`);
      t.same(fake.tenantsOn('dev1'), []);
    },
  );

  t.test(
    `B-crash-before-confirm-cleaned-by-delete: tenants a device took before the management system died without reading its answer are recorded as maybe, and the deletes remove them (a tenant that never arrived is no obstacle) (${engine})`,
    async (t) => {
      const db = await openStore(t, engine);
      if (!db) return;
      const fake = createFakeDevices(['dev1', 'dev2']);
      const before = centralOn(db, fake);
      t.equal((await run(before, await request('one', ['dev1']))).status, 'FINISHED');

      // dev2 takes the topology, policy and chain of sslo_two's deployment, then the process dies (its run is cut).
      const killed = new AbortController();
      fake.device('dev2').behaviour = losesAnswer(
        (tenants) => tenants.filter((tenant) => !tenant.startsWith('ssloS_') && !tenant.startsWith('ssloL_')),
        () => killed.abort(),
      );
      const cut = await run(before, await reusingOne(['dev1', 'dev2']), killed.signal);
      t.equal(cut.status, 'STARTED', 'the run was cut before it read the answer');
      t.same(
        await Promise.all(
          ['chain_one', 'icap_one'].map(
            async (name) => (await before.read(name === 'chain_one' ? 'chain' : 'service', name))?.unconfirmedDevices,
          ),
        ),
        [['dev2'], ['dev2']],
        'what the cut run sent to dev2 is recorded as maybe there, arrived or not',
      );
      await agree(t, before, fake, ['dev1', 'dev2']);

      // After the restart dev2 refuses connections: the task fails and names what may be left there (it is).
      const after = centralOn(db, fake);
      fake.device('dev2').behaviour = down;
      await after.deploy(cut.id, new AbortController().signal);
      const failed = (await after.task(cut.id))!;
      t.equal(failed.status, 'FAILED');
      t.match(failed.message, /Their removal could not be confirmed, so these tenants may still be on: dev2 \(ssloT_sslo_two\)\.$/);
      t.same(fake.tenantsOn('dev1'), ALL_OF_ONE, 'dev1 holds nothing of sslo_two');

      fake.device('dev2').behaviour = works;
      for (const [kind, name] of KINDS.filter(([kind]) => kind !== 'policy'))
        t.same(await after.remove(kind, name), {
          ok: true,
          value: {
            skippedDevices: [],
            message: `${kind === 'topology' ? 'Topology' : kind === 'chain' ? 'Service chain' : kind === 'ssl' ? 'SSL settings' : 'Service'} '${name}' was deleted.`,
          },
        });
      t.same(fake.tenantsOn('dev2'), ['ssloT_sslo_two'], 'only the tenant the FAILED task names is left on dev2');
      t.same(fake.tenantsOn('dev1'), []);
    },
  );
}
