// GET of the topology collection: every topology the management system holds, as its own read answers it,
// ordered by name and paged with $top and $skip.
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { createClient } from '../../../generated/topology/client/index.ts';
import * as sdk from '../../../generated/topology/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { topologyModule } from './module.ts';
import { renamedRequest } from './test-topology.ts';

const ADMIN_PASSWORD = 'central list pw';

/** A device that takes connections and never answers: every deployment stays STARTED while the test runs. */
async function silentDevice(t: TapTest): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return `http://admin:x@127.0.0.1:${port}`;
}

/** The central role alone (its inventory: one silent device `dev1`), logged in. */
async function central(t: TapTest) {
  const { system } = await startTestSystem(t, {
    config: {
      adminPassword: ADMIN_PASSWORD,
      roles: ['central'],
      centralDevices: `dev1=${await silentDevice(t)}`,
      centralDeviceTimeoutMs: 600_000,
    },
    modules: [topologyModule],
  });
  const login = await sdk.loginManagementUser({
    client: createClient({ baseUrl: system.url('central') }),
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
  });
  const token = login.data!.token.token;
  return { system, token, client: createClient({ baseUrl: system.url('central'), headers: { 'X-Vendor-Auth-Token': token } }) };
}

t.test('the collection lists every topology as its read does, ordered by name, paged by $top and $skip', async (t) => {
  const { system, client, token } = await central(t);
  const empty = await sdk.listTopologies({ client });
  t.equal(empty.response?.status, 200);
  t.same(empty.data, {
    items: [],
    totalItems: 0,
    kind: 'cm:ssl-orch:api:topology:topologycollectionstate',
    selfLink: 'https://localhost/mgmt/cm/ssl-orch/api/topology',
  });

  for (const suffix of ['b', 'C', 'a']) {
    const created = await sdk.createTopology({ client, body: await renamedRequest(suffix, ['dev1']) });
    t.equal(created.response?.status, 202, `sslo_${suffix} accepted`);
  }
  const all = await sdk.listTopologies({ client });
  t.equal(all.response?.status, 200);
  t.same(
    all.data?.items.map((item) => item.name),
    ['sslo_C', 'sslo_a', 'sslo_b'],
    'by name in code points (the same on every store)',
  );
  t.equal(all.data?.totalItems, 3);
  t.notOk(all.data && 'nextLink' in all.data, 'one page: no next');
  const one = await sdk.getTopology({ client, path: { topologyName: 'sslo_a' } });
  t.same(all.data?.items[1], one.data, 'each item is what its own read answers');
  t.match(one.data, { lastTaskStatus: 'STARTED', serviceChains: ['chain_a'], services: ['icap_a'] });

  const first = await sdk.listTopologies({ client, query: { $top: 2 } });
  t.same(
    first.data?.items.map((item) => item.name),
    ['sslo_C', 'sslo_a'],
  );
  t.equal(first.data?.totalItems, 3);
  t.equal(first.data?.nextLink, 'https://localhost/mgmt/cm/ssl-orch/api/topology?$top=2&$skip=2');
  const next = await fetch(`${system.url('central')}/mgmt/cm/ssl-orch/api/topology?$top=2&$skip=2`, {
    headers: { 'X-Vendor-Auth-Token': token },
  });
  const second = (await next.json()) as { items: { name: string }[]; nextLink?: string };
  t.same(
    second.items.map((item) => item.name),
    ['sslo_b'],
    'the next page',
  );
  t.notOk('nextLink' in second, 'the last page has no next');
  const beyond = await sdk.listTopologies({ client, query: { $skip: 10 } });
  t.match(beyond.data, { items: [], totalItems: 3 });
});

t.test('the collection needs the token; $top and $skip out of range are 400 in the management shape', async (t) => {
  const { system, token } = await central(t);
  const url = `${system.url('central')}/mgmt/cm/ssl-orch/api/topology`;
  t.equal((await fetch(url)).status, 401);
  for (const query of ['$top=0', '$top=501', '$top=x', '$skip=-1']) {
    const answer = await fetch(`${url}?${query}`, { headers: { 'X-Vendor-Auth-Token': token } });
    t.equal(answer.status, 400, query);
    t.match(await answer.json(), { code: 400, kind: ':resterrorresponse', message: /query\.\$(top|skip)/ }, query);
  }
});
