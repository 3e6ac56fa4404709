// kill -9 of one worker of `portolan start --workers 2` mid-work, round after round, on the embedded default (a
// SQLite file; the rate-limit counters in a SQLite file beside it): every worker runs every role (the device
// role in worker 1 only), so each round kills a process of every role. The primary starts the worker again;
// nothing acknowledged is lost, no task is run twice or left STARTED, the rate limit stays exact, and the
// device is back, with its queued deployments, once worker 1 is. (The same on PostgreSQL and Redis behind
// HAProxy: scale-out-kill.test.ts.)
import t from 'tap';
import { startCluster } from './test-cluster.ts';
import { assertNothingLost } from './test-cluster-checks.ts';
import { waitFor } from './test-cluster-wait.ts';
import { KILL_LIMIT, KILL_SETTINGS, killRounds, startWork, type Victims } from './test-cluster-work.ts';

t.setTimeout(600_000);

/** Rounds, the workers in turn (PORTOLAN_SCALE_OUT_ROUNDS for a longer run by hand). */
const ROUNDS = Number(process.env.PORTOLAN_SCALE_OUT_ROUNDS ?? 20);
/** Units of work started at once in a round, three of each kind: the kill comes once half are answered. */
const BURST = 18;
/** The worker that runs the device role. */
const DEVICE_WORKER = 1;

t.test(
  'kill -9 of one worker of `portolan start --workers 2` mid-work, twenty rounds: nothing acknowledged is lost, no task runs twice or stays STARTED',
  async (t) => {
    // A worker killed ten times is started again after 0.5 s, then 1 s (not up to 30 s: it keeps dying).
    const system = await startCluster(t, { layout: 'workers', env: { ...KILL_SETTINGS, PORTOLAN_WORKER_RESTART_MAX_DELAY_MS: '1000' } });
    const workers = system?.workers;
    if (!system || !workers) return;
    const { ledger, cookies, work } = await startWork(system);
    const kills = new Map<number, number[]>([
      [1, []],
      [2, []],
    ]);
    const basic = { authorization: `Basic ${Buffer.from(`admin:${system.adminPassword}`).toString('base64')}` };
    const deviceActive = async () =>
      /"description"\s*:\s*"ACTIVE"/.test(
        await (await fetch(`${system.urls.device}/mgmt/tm/cm/failover-status`, { headers: basic })).text(),
      );
    const pids = new Set([workers.pid(1), workers.pid(2)]);
    const back = { workers: 0, device: 0 };
    let killed = 0;
    const inTurn: Victims = {
      pick: async (round) => (round % 2) + 1,
      kill: async (victim) => void (killed = await workers.kill(victim)),
      restart: async (victim) => {
        await workers.restarted(victim, killed);
        if (!pids.has(workers.pid(victim))) back.workers++;
        pids.add(workers.pid(victim));
        // The device stopped with worker 1: it is back (active again) once worker 1 is.
        if (victim === DEVICE_WORKER) await waitFor('the device to be active again', deviceActive).then(() => void back.device++);
      },
    };
    await killRounds(system, {
      tag: 'workers',
      rounds: ROUNDS,
      burst: BURST,
      killAfter: BURST / 2,
      works: Object.values(work),
      ledger,
      victims: inTurn,
      onKill: (victim) => kills.get(victim)!.push(Date.now()), // wall-clock: compared with the jobs' own times, bounds no duration
    });
    t.equal(back.workers, ROUNDS, 'each killed worker was started again by the primary, a new process each time');
    t.equal(back.device, Math.ceil(ROUNDS / 2), 'each time worker 1 was killed, the device was active again once it was back');
    t.comment(
      `acknowledged: ${ledger.charts.length} charts, ${ledger.clientIds.length} registrations, ${ledger.topologyTasks.length} topology tasks, ` +
        `${ledger.deployTasks.length} deployments, ${ledger.snapshots.length} uploads, ${ledger.sessions.length} logins`,
    );
    t.ok(
      ledger.charts.length > ROUNDS &&
        ledger.topologyTasks.length > ROUNDS &&
        ledger.snapshots.length > ROUNDS &&
        ledger.deployTasks.length > ROUNDS / 2,
      'most work was acknowledged',
    );
    const gatewayBefore = workers.answered('gateway');
    const before = [gatewayBefore.get(1) ?? 0, gatewayBefore.get(2) ?? 0];
    await assertNothingLost(t, system, ledger, {
      limit: KILL_LIMIT,
      cookies,
      // The device's queue runs in worker 1 alone; the others' jobs in either worker.
      killsOf: (queue) => (queue === 'appsvcs-tasks' ? kills.get(DEVICE_WORKER) : [...kills.get(1)!, ...kills.get(2)!].sort()),
    });
    // (Their access lines are written in batches: waited for.)
    const both = async () =>
      (workers.answered('gateway').get(1) ?? 0) > before[0]! && (workers.answered('gateway').get(2) ?? 0) > before[1]!;
    t.ok(
      await waitFor("both workers' access lines", both).then(
        () => true,
        () => false,
      ),
      'the fresh token was counted through both workers',
    );
  },
);
