import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { tempSqliteUrl } from '../../app/test-system.ts';
import type { TapTest } from '../../lib/tap-test.ts';

const main = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const ROUNDS = 20;
// Forty process starts (a kill and a restart per round): their time is the machine's, so the file gets
// room beyond tap's 120 s default on a loaded machine; nothing asserts on how long a round takes.
t.setTimeout(600_000);
const ADMIN_PASSWORD = 'durable central pw';
const DEVICE = 'dev1.example.net';
const PREFIX_KIND: Readonly<Record<string, string>> = {
  ssloT_: 'topology',
  ssloP_: 'security-policy',
  ssloC_: 'service-chain',
  ssloS_: 'service',
  ssloL_: 'ssl',
};

/** Round `r`'s topology: its own SSL settings, policy and chain, and a service every round shares (reused). */
function roundRequest(r: number) {
  return {
    template: {
      TOPOLOGY: {
        name: `topo_${r}`,
        ingressNetwork: { vlans: [{ name: '/Common/vlan_internal' }] },
        type: 'topology_l3_outbound',
        sslSetting: `ssl_${r}`,
        securityPolicy: `policy_${r}`,
      },
      SSL_SETTINGS: { name: `ssl_${r}` },
      SECURITY_POLICY: {
        name: `policy_${r}`,
        rules: [
          {
            name: 'All Traffic',
            mode: 'edit',
            action: 'allow',
            operation: 'AND',
            isDefault: true,
            actionOptions: { ssl: 'intercept', serviceChain: `chain_${r}` },
          },
        ],
      },
      SERVICE_CHAIN: { c: { name: `chain_${r}`, orderedServiceList: [{ name: `icap_${r}` }, { name: 'icap_shared' }] } },
      SERVICE: {
        own: {
          name: `icap_${r}`,
          customService: { name: `icap_${r}`, serviceType: 'icap', loadBalancing: { devices: [{ ip: `198.51.100.${r}`, port: '1344' }] } },
        },
        shared: {
          name: 'icap_shared',
          customService: { name: 'icap_shared', serviceType: 'icap', loadBalancing: { devices: [{ ip: '198.51.100.200', port: '1344' }] } },
        },
      },
    },
    targetList: [{ type: 'DEVICE', name: DEVICE }],
  };
}

async function startSystem(t: TapTest, database: string, dir: string) {
  const env = {
    ...process.env,
    PORTOLAN_ROLES: 'central,device',
    PORTOLAN_CENTRAL_PORT: '0',
    PORTOLAN_DEVICE_PORT: '0',
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_DATABASE: database,
    PORTOLAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
    PORTOLAN_DEVICE_DATA_DIR: `${dir}/device`,
    PORTOLAN_DEVICE_HOSTNAME: DEVICE,
    // A killed process's task is taken over this long after the restart.
    PORTOLAN_CENTRAL_TASK_LEASE_MS: '600',
  };
  const child = spawn(process.execPath, [main, 'start'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  while (!/central\s+http:\/\/\S+/.test(out) || !/device\s+http:\/\/\S+/.test(out)) {
    if (child.exitCode !== null) throw new Error(`the system exited early:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const central = /central\s+(http:\/\/\S+)/.exec(out)![1]!;
  const device = /device\s+(http:\/\/\S+)/.exec(out)![1]!;
  const token = async (url: string, provider: string) => {
    const response = await fetch(`${url}/mgmt/shared/authn/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD, loginProviderName: provider }),
    });
    return ((await response.json()) as { token: { token: string } }).token.token;
  };
  const [centralToken, deviceToken] = await Promise.all([token(central, 'local'), token(device, 'tmos')]);
  const get = async (url: string, path: string, auth: string) => {
    const response = await fetch(`${url}${path}`, { headers: { 'x-vendor-auth-token': auth } });
    return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as any) };
  };
  return {
    child,
    create: (body: unknown) =>
      fetch(`${central}/mgmt/cm/ssl-orch/api/topology`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-vendor-auth-token': centralToken },
        body: JSON.stringify(body),
      }),
    central: (path: string) => get(central, path, centralToken),
    device: (path: string) => get(device, path, deviceToken),
  };
}

const kill = async (child: ChildProcess) => {
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
};

t.test(
  `${ROUNDS} rounds of kill -9 during deployments: after each restart no task stays STARTED and no device tenant is without its record (or its task names it)`,
  async (t) => {
    const { url: database, dir } = tempSqliteUrl(t);
    // Odd rounds kill at a spread of delays after sending (before, during or after the save and the
    // deployment, depending on the machine); even rounds after the 202, at a spread too. The checks
    // hold wherever the kill lands: nothing here depends on speed.
    const delays = Array.from({ length: ROUNDS }, (_, r) => (r * 89) % 400);
    const tasks = new Map<number, string>();
    for (let r = 1; r <= ROUNDS; r++) {
      const system = await startSystem(t, database, dir);
      const sent = system.create(roundRequest(r)).then(
        async (response) => ({ status: response.status, id: ((await response.json()) as { id?: string }).id }),
        () => ({ status: 'cut' as const, id: undefined }),
      );
      if (r % 2 === 0) t.equal((await sent).status, 202, `round ${r}: accepted before the kill`);
      await new Promise((resolve) => setTimeout(resolve, delays[r - 1]));
      await kill(system.child);
      const answer = await sent;
      if (answer.id) tasks.set(r, answer.id);

      const after = await startSystem(t, database, dir);
      // The round's task (if the request got that far) ends: resumed after the lease, or failed.
      const topology = await after.central(`/mgmt/cm/ssl-orch/api/topology/topo_${r}`);
      const taskId = answer.id ?? (topology.status === 200 ? (topology.body.lastTaskId as string) : undefined);
      if (taskId) {
        tasks.set(r, taskId);
        let status = 'STARTED';
        for (let polls = 0; status === 'STARTED' && polls < 3000; polls++) {
          status = (await after.central(`/mgmt/cm/ssl-orch/tasks/api/${taskId}`)).body.status as string;
          if (status === 'STARTED') await new Promise((resolve) => setTimeout(resolve, 20));
        }
        t.not(status, 'STARTED', `round ${r}: the task ended (${status})`);
      } else {
        t.equal(topology.status, 404, `round ${r}: cut before the save, nothing was kept`);
      }

      // Every sslo tenant on the device has its record on the management system, or a failed task names it.
      const failedMessages: string[] = [];
      for (const id of tasks.values()) {
        const task = await after.central(`/mgmt/cm/ssl-orch/tasks/api/${id}`);
        t.not(task.body.status, 'STARTED', `round ${r}: task ${id} is not STARTED`);
        if (task.body.status === 'FAILED') failedMessages.push(String(task.body.message));
      }
      const declared = await after.device('/mgmt/shared/appsvcs/declare');
      const onDevice = Object.keys(declared.body ?? {}).filter((key) => key.startsWith('sslo'));
      for (const tenant of onDevice) {
        const prefix = tenant.slice(0, 6);
        const kind = PREFIX_KIND[prefix]!;
        const record = await after.central(`/mgmt/cm/ssl-orch/api/${kind}/${tenant.slice(6)}`);
        t.ok(
          record.status === 200 || failedMessages.some((m) => m.includes(tenant)),
          `round ${r}: device tenant ${tenant} has its record (${record.status}) or a task names it`,
        );
      }
      // A FINISHED topology is wholly on the device.
      const finished = await after.central(`/mgmt/cm/ssl-orch/api/topology/topo_${r}`);
      if (finished.status === 200 && finished.body.lastTaskStatus === 'FINISHED') {
        for (const tenant of [
          `ssloT_topo_${r}`,
          `ssloP_policy_${r}`,
          `ssloC_chain_${r}`,
          `ssloS_icap_${r}`,
          'ssloS_icap_shared',
          `ssloL_ssl_${r}`,
        ]) {
          t.ok(onDevice.includes(tenant), `round ${r}: ${tenant} is on the device`);
        }
      }
      await kill(after.child);
    }
    // Where the kills landed depends on the machine: reported, not asserted.
    const store = new DatabaseSync(database.slice('sqlite:'.length), { readOnly: true });
    const resumed = store.prepare("SELECT COUNT(*) AS n FROM jobs WHERE queue = 'topology-deploy' AND attempts > 1").get() as { n: number };
    store.close();
    t.comment(`${tasks.size} of ${ROUNDS} requests were saved before the kill; ${resumed.n} deployments were taken over after one`);
  },
);
