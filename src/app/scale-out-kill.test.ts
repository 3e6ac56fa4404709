// kill -9 of one process of a role mid-work, round after round, on the multi-machine layout (two processes of
// every role on one PostgreSQL and one Redis, HAProxy in front: test-cluster.ts): nothing acknowledged is lost,
// no task is run twice or left STARTED, the rate limit stays exact, the device's standby takes over. The same
// for the workers of `portolan start --workers 2`: scale-out-workers-kill.test.ts.
import t from 'tap';
import type { RoleName } from '../lib/roles.ts';
import { startCluster, type Cluster } from './test-cluster.ts';
import { assertNothingLost } from './test-cluster-checks.ts';
import { waitFor } from './test-cluster-wait.ts';
import { KILL_LIMIT, KILL_SETTINGS, killRounds, startWork, type Victims, type Work } from './test-cluster-work.ts';

t.setTimeout(600_000);

/** Rounds per role (PORTOLAN_SCALE_OUT_ROUNDS for a longer run by hand). */
const ROUNDS = Number(process.env.PORTOLAN_SCALE_OUT_ROUNDS ?? 20);
/** Units of work started at once in a round: the kill comes once the first is answered, the others in flight. */
const BURST = 4;
/** The role whose processes run each queue's jobs. */
const QUEUE_ROLE: Record<string, RoleName> = {
  'topology-deploy': 'central',
  'snapshot-processing': 'diagnostics',
  'appsvcs-tasks': 'device',
};

/** Each process of `role` in turn, killed and started again. */
const inTurn = (cluster: Cluster, role: RoleName): Victims => ({
  pick: async (round) => round % 2,
  kill: (victim) => cluster.kill(role, victim),
  restart: (victim) => cluster.restart(role, victim),
});

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
    ...inTurn(cluster, 'device'),
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
    const cluster = await startCluster(t, { env: KILL_SETTINGS });
    if (!cluster) return;
    const { ledger, cookies, work: w } = await startWork(cluster);
    const kills = new Map<RoleName, number[]>(cluster.nodes.map((n) => [n.role, []]));
    const work: Record<RoleName, Work[]> = {
      gateway: [w.createChart, w.register],
      mapping: [w.createChart],
      device: [w.deployDeclaration, w.register],
      central: [w.createTopology],
      diagnostics: [w.uploadSnapshot],
      login: [w.logIn],
    };
    // Every role's rounds at once: a kill of one role while another's work crosses it is part of the test.
    const takeovers = { count: 0 };
    await Promise.all(
      (Object.keys(work) as RoleName[]).map((role) =>
        killRounds(cluster, {
          tag: role,
          rounds: ROUNDS,
          burst: BURST,
          works: work[role],
          ledger,
          victims: role === 'device' ? activeDevice(cluster, takeovers) : inTurn(cluster, role),
          onKill: () => kills.get(role)!.push(Date.now()), // wall-clock: compared with the jobs' own times, bounds no duration
        }),
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
    await assertNothingLost(t, cluster, ledger, {
      limit: KILL_LIMIT,
      cookies,
      killsOf: (queue) => (QUEUE_ROLE[queue] ? kills.get(QUEUE_ROLE[queue])! : undefined),
    });
  },
);
