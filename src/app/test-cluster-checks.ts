// Test helper: what a kill test (scale-out-kill.test.ts, scale-out-workers-kill.test.ts) checks once its rounds
// are over, whatever the layout: every write the ledger says was acknowledged reads back, every task and job
// ended once (none left STARTED, queued or running; none run again but for a kill while it was open), and the
// rate limit counted every answered request once.
import { request } from 'node:http';
import type { TapTest } from '../lib/tap-test.ts';
import { openDatabase } from '../stores/open-database.ts';
import { ALL_MIGRATIONS } from './modules.ts';
import type { Cluster } from './test-cluster.ts';
import { waitFor } from './test-cluster-wait.ts';
import { centralToken, WORK_TOKEN, type Ledger } from './test-cluster-work.ts';

export type Job = { id: string; queue: string; state: string; attempts: number; created_ms: number; finished_ms: number | null };

export type AfterKills = {
  /** The rate limit every process was given (PORTOLAN_RATE_LIMIT_LIMIT). */
  limit: number;
  /** The cookies of a diagnostics session (the snapshots' reads). */
  cookies: string;
  /** When (wall-clock ms) each kill that could have stopped a job of `queue` came; undefined: not a queue checked. */
  killsOf(queue: string): readonly number[] | undefined;
};

/** Everything a kill test checks once its rounds are over (see the file's head). */
export async function assertNothingLost(t: TapTest, cluster: Cluster, ledger: Ledger, options: AfterKills): Promise<void> {
  const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });
  const basic = { authorization: `Basic ${Buffer.from(`admin:${cluster.adminPassword}`).toString('base64')}` };

  const lostCharts = [];
  for (const chart of ledger.charts) {
    const response = await get(`${cluster.urls.gateway}/api/charts/${chart.id}`);
    const body = response.status === 200 ? ((await response.json()) as { data: { name: string } }) : undefined;
    if (body?.data.name !== chart.name) lostCharts.push(`${chart.id}: ${response.status}`);
  }
  t.same(lostCharts, [], 'every acknowledged chart reads back, through any gateway and any mapping process');

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
      topologyStatus.set(id, response.status === 200 ? ((await response.json()) as { status: string }).status : `HTTP ${response.status}`);
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
        cookie: options.cookies,
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

  const deployStatus: string[] = [];
  await waitFor('every declarative deployment to end', async () => {
    deployStatus.length = 0;
    for (const id of ledger.deployTasks) {
      const response = await get(`${cluster.urls.device}/mgmt/shared/appsvcs/task/${id}`, basic);
      const body = response.status === 200 ? ((await response.json()) as { results: { code: number }[] }) : undefined;
      if (!body || body.results[0]?.code === 0)
        deployStatus.push(`${id}: ${response.status} ${body ? JSON.stringify(body.results[0]) : (await response.text()).slice(0, 200)}`);
    }
    return deployStatus.length === 0;
  }).catch(() => undefined);
  // A task without its record: what the job queue knows of it.
  for (const [i, line] of deployStatus.entries()) {
    const id = line.slice(0, line.indexOf(':'));
    const [job] = await query<Job>(
      cluster,
      `SELECT id, queue, state, attempts, created_ms, finished_ms FROM jobs WHERE id LIKE '%${id.replace(/[^A-Za-z0-9-]/g, '')}'`,
    );
    deployStatus[i] = `${line} (its job: ${job ? `${job.state}, ${job.attempts} attempts` : 'none'})`;
  }
  t.same(deployStatus, [], 'every acknowledged declarative deployment ended (none left in progress)');

  const jobs = (await query<Job>(cluster, 'SELECT id, queue, state, attempts, created_ms, finished_ms FROM jobs')).map((j) => ({
    ...j,
    attempts: Number(j.attempts),
    created_ms: Number(j.created_ms),
    finished_ms: j.finished_ms === null ? null : Number(j.finished_ms),
  }));
  t.same(
    jobs.filter((j) => j.state !== 'done' && j.state !== 'failed'),
    [],
    'no job is left queued or running',
  );
  const checked = new Set(jobs.filter((j) => options.killsOf(j.queue)).map((j) => j.queue));
  t.ok(checked.size >= 3, `the jobs of every queue are checked (${[...checked].join(', ')})`);
  const rerun = jobs.filter((j) => {
    const kills = options.killsOf(j.queue);
    if (!kills) return false;
    const open = kills.filter((at) => at >= j.created_ms - 1000 && at <= (j.finished_ms ?? Number.MAX_SAFE_INTEGER));
    return j.attempts > 1 + open.length;
  });
  t.same(rerun, [], 'no job ran more often than once plus once per kill of its process while it was open');

  // The rate limit: every request the gateways answered was counted once, whichever answered it; one lost with
  // its process may have been counted before it died.
  const remaining = async (token: string) =>
    (
      (await (await get(`${cluster.urls.gateway}/rate_limit_status`, { authorization: `Bearer ${token}` })).json()) as Record<
        string,
        number
      >
    )['x-rate-limit-remaining']!;
  const used = options.limit - (await remaining(WORK_TOKEN));
  const { answered, lost } = ledger.counted;
  t.ok(
    used >= answered && used <= answered + lost,
    `the work's token used ${used}: the ${answered} answered plus at most the ${lost} lost`,
  );
  // And after the kills, exact across every process: 50 requests with a fresh token, each on a connection of its
  // own (a balancer or node:cluster spreads connections). A path passed on to the pool, not /health: each request
  // leaves an access line naming the process that answered it (a healthy /health is logged at debug only).
  const fresh = `scale-out-exact-${Date.now()}`; // wall-clock: a unique token, bounds nothing
  for (let i = 0; i < 50; i++) await getOnNewConnection(`${cluster.urls.gateway}/api/vessels`, { authorization: `Bearer ${fresh}` });
  t.equal(await remaining(fresh), options.limit - 50, 'a fresh token used 50 times through every gateway process has exactly 50 counted');
}

/** Rows of the system's database (PostgreSQL or the SQLite file). */
export async function query<R extends Record<string, unknown>>(cluster: Cluster, sql: string): Promise<R[]> {
  const database = await openDatabase(cluster.databaseUrl, { migrations: ALL_MIGRATIONS });
  try {
    return await database.query<R>(sql);
  } finally {
    await database.close();
  }
}

/** One GET on a connection of its own, its answer read to the end; its status. */
const getOnNewConnection = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
