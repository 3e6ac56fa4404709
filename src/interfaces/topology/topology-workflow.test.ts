import t from 'tap';
import { createClient } from '../../../generated/topology/client/index.ts';
import * as sdk from '../../../generated/topology/sdk.gen.ts';
import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import { createClient as createDeviceSdkClient } from '../../../generated/device-config/client/index.ts';
import * as device from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { loadSpecExample } from './test-topology.ts';

const ADMIN_PASSWORD = 'central admin pw';

async function seedWorkflow(t: TapTest, database?: string) {
  const { system } = await startTestSystem(t, {
    config: { adminPassword: ADMIN_PASSWORD, deviceHostname: 'sslo-device-1.example.net', ...(database ? { database } : {}) },
  });
  const anonymous = createClient({ baseUrl: system.url('central') });
  const login = await sdk.loginManagementUser({
    client: anonymous,
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
  });
  t.equal(login.response?.status, 200);
  const client = createClient({ baseUrl: system.url('central'), headers: { 'X-Vendor-Auth-Token': login.data!.token.token } });

  // Device discovery: the inventory names the local device role.
  const inventory = await sdk.listManagedDevices({ client });
  t.equal(inventory.response?.status, 200);
  t.same(
    inventory.data?.items.map((d) => d.hostname),
    ['sslo-device-1.example.net'],
  );
  t.notMatch(JSON.stringify(inventory.data), new RegExp(ADMIN_PASSWORD), 'no credential in the inventory');

  const request = await loadSpecExample<TopologyRequest>('l3Outbound');
  const created = await sdk.createTopology({ client, body: request });
  t.equal(created.response?.status, 202);
  t.match(created.data, { id: /\S/, status: 'STARTED', topologyName: 'sslo_outbound' });
  t.equal(created.response?.headers.get('location'), `/mgmt/cm/ssl-orch/tasks/api/${created.data!.id}`);

  let task = created.data!;
  for (let polls = 0; task.status === 'STARTED' && polls < 1500; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const read = await sdk.getTopologyTask({ client, path: { taskId: task.id } });
    t.equal(read.response?.status, 200);
    task = read.data!;
  }
  t.equal(task.status, 'FINISHED', task.message ?? 'no message');
  t.match(task, { message: 'Topology sslo_outbound deployed to sslo-device-1.example.net.', endTime: /^\d{4}-/ });

  // On the device, through its own REST (token login there too).
  const deviceLogin = await device.loginDeviceUser({
    client: createDeviceSdkClient({ baseUrl: system.url('device') }),
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'tmos' },
  });
  const onDevice = createDeviceSdkClient({
    baseUrl: system.url('device'),
    headers: { 'X-Vendor-Auth-Token': deviceLogin.data!.token.token },
  });
  const tenants = async () => {
    const declared = await device.getDeclaration({ client: onDevice });
    return declared.response?.status === 204
      ? []
      : Object.keys(declared.data ?? {})
          .filter((key) => key.startsWith('sslo'))
          .sort();
  };
  t.same(await tenants(), ['ssloC_chain_icap', 'ssloL_ssl_outbound', 'ssloP_policy_outbound', 'ssloS_icap_dlp', 'ssloT_sslo_outbound']);
  const service = await device.getTenantDeclaration({ client: onDevice, path: { tenants: 'ssloS_icap_dlp' } });
  t.match(
    service.data,
    {
      ssloS_icap_dlp: {
        class: 'Tenant',
        sslo: {
          pool: {
            class: 'Pool',
            monitors: ['tcp'],
            members: [
              { servicePort: 1344, serverAddresses: ['198.51.100.20'] },
              { servicePort: 1344, serverAddresses: ['198.51.100.21'] },
            ],
          },
          definition: { class: 'SSLO_Service', name: 'icap_dlp', customService: { serviceType: 'icap' } },
        },
      },
    },
    'the ICAP service is a pool with its members and monitor',
  );

  // Reads: SSL settings given only a name read back with their defaults.
  const ssl = await sdk.getSslSettings({ client, path: { sslSettingsName: 'ssl_outbound' } });
  t.match(ssl.data, {
    name: 'ssl_outbound',
    serverSettings: { caBundle: '/Common/ca-bundle.crt' },
    clientSettings: { cipherString: 'DEFAULT' },
    usedBy: ['sslo_outbound'],
    devices: ['sslo-device-1.example.net'],
  });
  const topology = await sdk.getTopology({ client, path: { topologyName: 'sslo_outbound' } });
  t.match(topology.data, {
    name: 'sslo_outbound',
    serviceChains: ['chain_icap'],
    services: ['icap_dlp'],
    lastTaskId: task.id,
    lastTaskStatus: 'FINISHED',
  });

  // In use: 409 naming the user.
  const chainInUse = await sdk.deleteServiceChain({ client, path: { chainName: 'chain_icap' } });
  t.equal(chainInUse.response?.status, 409);
  t.match(chainInUse.error, { message: "Service chain 'chain_icap' is used by rule 'All Traffic' of security policy 'policy_outbound'." });

  // The seed's order: topology (takes its security policy along), service chain, SSL settings, then services.
  for (const [label, remove, gone] of [
    [
      'topology',
      () => sdk.deleteTopology({ client, path: { topologyName: 'sslo_outbound' } }),
      ['ssloT_sslo_outbound', 'ssloP_policy_outbound'],
    ],
    ['service chain', () => sdk.deleteServiceChain({ client, path: { chainName: 'chain_icap' } }), ['ssloC_chain_icap']],
    ['SSL settings', () => sdk.deleteSslSettings({ client, path: { sslSettingsName: 'ssl_outbound' } }), ['ssloL_ssl_outbound']],
    ['service', () => sdk.deleteService({ client, path: { serviceName: 'icap_dlp' } }), ['ssloS_icap_dlp']],
  ] as const) {
    const before = await tenants();
    const removed = await remove();
    t.equal(removed.response?.status, 204, `${label} deleted`);
    t.same(
      await tenants(),
      before.filter((name) => !(gone as readonly string[]).includes(name)),
      `${label}: its tenants left the device`,
    );
  }
  t.same(await tenants(), [], 'nothing of the topology is left on the device');
  const policy = await sdk.getSecurityPolicy({ client, path: { securityPolicyName: 'policy_outbound' } });
  t.equal(policy.response?.status, 404, 'the topology took the security policy it owned');
  const again = await sdk.deleteTopology({ client, path: { topologyName: 'sslo_outbound' } });
  t.equal(again.response?.status, 404);
}

const WORKFLOW =
  "the seed's workflow over real HTTP through the SDK: log in, create, poll until FINISHED, see it on the device, delete in the seed's order";
t.test(`${WORKFLOW} (embedded store)`, (t) => seedWorkflow(t));
t.test(`${WORKFLOW} (PostgreSQL)`, async (t) => {
  const url = await withTestPostgres(t);
  if (url) await seedWorkflow(t, url);
});
