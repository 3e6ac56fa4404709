// kill -9 of one process of a role mid-work, round after round, on the multi-machine layout (two processes of
// every role on one PostgreSQL and one Redis, HAProxy in front: test-cluster.ts): nothing acknowledged is lost,
// no task is run twice or left STARTED, the rate limit stays exact, the device's standby takes over.
import t from 'tap';
import pg from 'pg';
import type { RoleName } from '../lib/roles.ts';
import { startCluster, type Cluster } from './test-cluster.ts';
import { waitFor } from './test-cluster-wait.ts';
import {
  centralToken,
  createChart,
  createTopology,
  deployDeclaration,
  diagnosticsLogin,
  logIn,
  newLedger,
  register,
  uploadSnapshot,
  WORK_TOKEN,
  type Ledger,
  type Work,
} from './test-cluster-work.ts';

t.setTimeout(600_000);

/** Rounds per role (PORTOLAN_SCALE_OUT_ROUNDS for a longer run by hand). */
const ROUNDS = Number(process.env.PORTOLAN_SCALE_OUT_ROUNDS ?? 20);
/** Units of work started at once in a round: the kill comes once the first is answered, the others in flight. */
const BURST = 4;
const LIMIT = 100_000;
const SETTINGS = {
  PORTOLAN_RATE_LIMIT_LIMIT: String(LIMIT),
  // A task or a processing job whose process died is taken up again this long after.
  PORTOLAN_CENTRAL_TASK_LEASE_MS: '1500',
  PORTOLAN_SNAPSHOT_LEASE_MS: '1500',
  // The standby takes over this long after the active device died.
  PORTOLAN_DEVICE_LEASE_MS: '800',
};

/** kill -9 of a process of `role` (each in turn) while `work` is under way; then it starts again. */
/** How a role's rounds pick the process to kill, and what they wait for once it is dead. */
type Victims = { pick(round: number): Promise<number>; afterKill?(victim: number): Promise<void> };
const inTurn: Victims = { pick: async (round) => round % 2 };

/** kill -9 of a process of `role` while `work` is under way; then it starts again. */
async function rounds(
  cluster: Cluster,
  role: RoleName,
  works: readonly Work[],
  ledger: Ledger,
  kills: Map<RoleName, number[]>,
  victims = inTurn,
) {
  for (let round = 0; round < ROUNDS; round++) {
    const victim = await victims.pick(round);
    const burst = Array.from({ length: BURST }, (_, i) => works[i % works.length]!(cluster, ledger, `${role}-${round}-${i}`));
    await Promise.race(burst);
    await cluster.kill(role, victim);
    kills.get(role)!.push(Date.now()); // wall-clock: compared with the jobs' own times, bounds no duration
    await victims.afterKill?.(victim);
    await Promise.all(burst);
    await cluster.restart(role, victim);
  }
}

/**
 * The device pair's rounds: the active device is the one killed, and the standby must take over (say ACTIVE in
 * its failover status). Counts the takeovers.
 */
function activeDevice(cluster: Cluster, takeovers: { count: number }): Victims {
  const basic = { authorization: `Basic ${Buffer.from(`admin:${cluster.adminPassword}`).toString('base64')}` };
  const failover = async (index: number) => {
    const response = await fetch(`${cluster.node('device', index).url}/mgmt/tm/cm/failover-status`, { headers: basic });
    return /"description"\s*:\s*"(ACTIVE|STANDBY)"/.exec(await response.text())?.[1];
  };
  return {
    pick: async () => {
      let active = -1;
      await waitFor('one device process to be active', async () => {
        const states = await Promise.all([failover(0), failover(1)]);
        active = states.indexOf('ACTIVE');
        return states.filter((s) => s === 'ACTIVE').length === 1;
      });
      return active;
    },
    afterKill: async (victim) => {
      await waitFor('the standby device to take over', async () => (await failover(1 - victim)) === 'ACTIVE').then(
        () => void takeovers.count++,
        () => undefined,
      );
    },
  };
}

t.test(
  'kill -9 of one process of a role mid-work, twenty rounds each: nothing acknowledged is lost, no task runs twice or stays STARTED',
  async (t) => {
    const cluster = await startCluster(t, { env: SETTINGS });
    if (!cluster) return;
    const token = await centralToken(cluster);
    const cookies = await diagnosticsLogin(cluster);
    if (!cookies) throw new Error('the diagnostics login failed before any kill');
    const ledger = newLedger();
    const kills = new Map<RoleName, number[]>(cluster.nodes.map((n) => [n.role, []]));
    const work: Record<RoleName, Work[]> = {
      gateway: [createChart, register],
      mapping: [createChart],
      device: [deployDeclaration, register],
      central: [createTopology(() => token)],
      diagnostics: [uploadSnapshot(() => cookies)],
      login: [logIn],
    };
    // Every role's rounds at once: a kill of one role while another's work crosses it is part of the test.
    const takeovers = { count: 0 };
    await Promise.all(
      (Object.keys(work) as RoleName[]).map((role) =>
        rounds(cluster, role, work[role], ledger, kills, role === 'device' ? activeDevice(cluster, takeovers) : inTurn),
      ),
    );
    t.equal(takeovers.count, ROUNDS, 'each time the active device was killed, the standby took over');
    await cluster.settled();
    t.comment(
      `acknowledged: ${ledger.charts.length} charts, ${ledger.clientIds.length} registrations, ${ledger.topologyTasks.length} topology tasks, ` +
        `${ledger.deployTasks.length} deployments, ${ledger.snapshots.length} uploads, ${ledger.sessions.length} logins`,
    );
    t.ok(
      ledger.charts.length > ROUNDS && ledger.topologyTasks.length > ROUNDS && ledger.snapshots.length > ROUNDS,
      'most work was acknowledged',
    );

    const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });
    const basic = { authorization: `Basic ${Buffer.from(`admin:${cluster.adminPassword}`).toString('base64')}` };

    const lostCharts = [];
    for (const chart of ledger.charts) {
      const response = await get(`${cluster.urls.gateway}/api/charts/${chart.id}`);
      const body = response.status === 200 ? ((await response.json()) as { data: { name: string } }) : undefined;
      if (body?.data.name !== chart.name) lostCharts.push(`${chart.id}: ${response.status}`);
    }
    t.same(lostCharts, [], 'every acknowledged chart reads back, through either gateway and either mapping process');

    const sessionsLost = [];
    for (const cookie of ledger.sessions) {
      const response = await get(`${cluster.urls.diagnostics}/snapshot-analyzer/api/snapshots`, { cookie });
      if (response.status !== 200) sessionsLost.push(response.status);
    }
    t.same(sessionsLost, [], 'every acknowledged login is a session diagnostics knows');

    // The device has no read of its client applications over REST: its store says.
    const bound = new Set(
      (
        await query<{ client_id: string }>(
          cluster,
          'SELECT a.client_id FROM device_oauth_client_apps a JOIN device_oauth_profile_client_apps b ON b.app_name = a.name',
        )
      ).map((r) => r.client_id),
    );
    t.same(
      ledger.clientIds.filter((id) => !bound.has(id)),
      [],
      'every acknowledged registration is a client application on the device, bound to its OAuth profile',
    );

    // Tasks end, each once: none left STARTED (or processing), none run twice but by a kill of its process.
    const topologyStatus = new Map<string, string>();
    await waitFor('every topology task to end', async () => {
      for (const id of ledger.topologyTasks.filter((id) => topologyStatus.get(id) === undefined || topologyStatus.get(id) === 'STARTED')) {
        const response = await get(`${cluster.urls.central}/mgmt/cm/ssl-orch/tasks/api/${id}`, {
          'x-vendor-auth-token': await centralToken(cluster),
        });
        topologyStatus.set(
          id,
          response.status === 200 ? ((await response.json()) as { status: string }).status : `HTTP ${response.status}`,
        );
      }
      return [...topologyStatus.values()].every((s) => s !== 'STARTED');
    }).catch(() => undefined);
    t.same(
      [...topologyStatus].filter(([, status]) => status !== 'FINISHED' && status !== 'FAILED').map(([id, s]) => `${id}: ${s}`),
      [],
      'every acknowledged topology task ended FINISHED or FAILED',
    );

    const snapshotStatus = new Map<string, number>();
    await waitFor('every upload to be processed', async () => {
      for (const id of ledger.snapshots.filter((id) => (snapshotStatus.get(id) ?? 202) === 202)) {
        const response = await get(`${cluster.urls.diagnostics}/snapshot-analyzer/api/snapshots/${id}`, {
          cookie: cookies,
          accept: 'application/vnd.vendor.diagnostics.api+json',
        });
        await response.body?.cancel();
        snapshotStatus.set(id, response.status);
      }
      return [...snapshotStatus.values()].every((s) => s !== 202);
    }).catch(() => undefined);
    t.same(
      [...snapshotStatus].filter(([, status]) => status !== 422).map(([id, s]) => `${id}: ${s}`),
      [],
      'every acknowledged upload was processed to its end (not an archive: 422 ERROR), none left processing',
    );

    const jobs = await jobsOf(cluster);
    const unfinished = jobs.filter((j) => j.state !== 'done' && j.state !== 'failed');
    t.same(unfinished, [], 'no job is left queued or running');
    const queueRole: Record<string, RoleName> = { 'topology-deploy': 'central', 'snapshot-processing': 'diagnostics' };
    const rerun = jobs.filter((j) => {
      const role = queueRole[j.queue];
      if (!role) return false;
      const killed = kills.get(role)!.filter((at) => at >= j.created_ms - 1000 && at <= Number(j.finished_ms ?? Number.MAX_SAFE_INTEGER));
      return j.attempts > 1 + killed.length;
    });
    t.same(rerun, [], 'no job ran more often than once plus once per kill of its role while it was open');

    const deployStatus: string[] = [];
    for (const id of ledger.deployTasks) {
      const response = await get(`${cluster.urls.device}/mgmt/shared/appsvcs/task/${id}`, basic);
      const body = response.status === 200 ? ((await response.json()) as { results: { code: number }[] }) : undefined;
      if (!body || body.results[0]?.code === 0)
        deployStatus.push(`${id}: ${response.status} ${body ? JSON.stringify(body.results[0]) : (await response.text()).slice(0, 200)}`);
    }
    t.same(deployStatus, [], 'every acknowledged declarative deployment ended (none left in progress)');

    // The rate limit: every request the gateways answered was counted once, whichever answered it; one lost with
    // its process may have been counted before it died.
    const status = (token: string) =>
      get(`${cluster.urls.gateway}/rate_limit_status`, { authorization: `Bearer ${token}` }).then(
        async (r) => ((await r.json()) as { 'x-rate-limit-remaining': number })['x-rate-limit-remaining'],
      );
    const used = LIMIT - (await status(WORK_TOKEN));
    const { answered, lost } = ledger.counted;
    t.ok(
      used >= answered && used <= answered + lost,
      `the work's token used ${used}: the ${answered} answered plus at most the ${lost} lost`,
    );
    // And after the kills, exact across both gateways: 50 requests with a fresh token, round robin over both.
    const fresh = `scale-out-exact-${Date.now()}`; // wall-clock: a unique token, bounds nothing
    for (let i = 0; i < 50; i++) await (await get(`${cluster.urls.gateway}/health`, { authorization: `Bearer ${fresh}` })).body?.cancel();
    t.equal(await status(fresh), LIMIT - 50, 'a fresh token used 50 times through both gateways has exactly 50 counted');
  },
);

type Job = { id: string; queue: string; state: string; attempts: number; created_ms: number; finished_ms: number | null };

const jobsOf = (cluster: Cluster) =>
  query<Job>(cluster, 'SELECT id, queue, state, attempts, created_ms::float8 AS created_ms, finished_ms::float8 AS finished_ms FROM jobs');

/** Rows of the cluster's database. */
async function query<R extends pg.QueryResultRow>(cluster: Cluster, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: cluster.databaseUrl });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}
