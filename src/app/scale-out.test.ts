// The multi-machine layout, proven on one machine: two processes of every role on one PostgreSQL and one Redis,
// HAProxy in front with the configuration `portolan haproxy-config` writes (test-cluster.ts). The workflows of
// every interface give what one process gives; kill -9 of a process mid-work loses nothing acknowledged
// (scale-out-kill.test.ts).
import t from 'tap';
import { runConformance } from '../../conformance/run.ts';
import { compareRuns, unmatched } from '../../conformance/differential.ts';
import type { RunResult } from '../../conformance/model.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import { CLUSTER_REGISTRATION_USER, startCluster, type Cluster } from './test-cluster.ts';

t.setTimeout(600_000);

/** Small enough that the rate-limit scenario's window is quick to use up. */
const RATE_LIMIT = 40;
const SETTINGS = { PORTOLAN_RATE_LIMIT_LIMIT: String(RATE_LIMIT) };
const SEED = 20250314;

/** The conformance suite (every operation, every scenario, some fuzzing) against one system. */
const conformanceOf = (system: Cluster) =>
  runConformance({
    targets: system.urls,
    seed: SEED,
    // Fuzzing is left out: it is no workflow, and its requests race the device's asynchronous deployments.
    fuzzRuns: 0,
    credentials: {
      admin: { user: 'admin', password: system.adminPassword },
      registration: { user: CLUSTER_REGISTRATION_USER, password: system.registrationPassword },
    },
    variables: { rateLimit: RATE_LIMIT, registrationHost: system.registrationHost },
    writes: { sent: true, why: 'a system this test started, on a fresh database' },
    env: {},
  });

/** Each check's verdict: every operation on every role, every scenario, every fuzzed operation. */
function verdicts(run: RunResult): Map<string, string> {
  return new Map([
    ...run.operations.map((o) => [`operation ${o.interface} ${o.operationId} on ${o.role}`, o.outcome] as const),
    ...run.scenarios.map((s) => [`scenario ${s.name}`, s.outcome] as const),
    ...run.fuzz.map((f) => [`fuzz ${f.interface} ${f.operationId} on ${f.role}`, f.outcome] as const),
  ]);
}

/** What went wrong in a failed check, in one line (its reason, or its first violation). */
function why(run: RunResult, key: string): string {
  const [kind, ...rest] = key.split(' ');
  const name = rest.join(' ');
  const found =
    kind === 'scenario'
      ? run.scenarios.find((s) => `scenario ${s.name}` === key)
      : kind === 'fuzz'
        ? run.fuzz.find((f) => `${f.interface} ${f.operationId} on ${f.role}` === name)
        : run.operations.find((o) => `${o.interface} ${o.operationId} on ${o.role}` === name);
  if (!found) return '';
  const probe = 'probes' in found ? found.probes.find((p) => p.outcome === 'fail') : undefined;
  const step = 'steps' in found ? found.steps.find((s) => s.violations.length > 0) : undefined;
  const violation = probe?.violations[0] ?? step?.violations[0] ?? ('failure' in found ? found.failure?.violations[0] : undefined);
  return [found.reason, probe && `${probe.name}: ${probe.status}`, violation && JSON.stringify(violation)]
    .filter(Boolean)
    .join('; ')
    .slice(0, 400);
}

/** Requests each process answered (its /metrics), HAProxy's checks left out. */
async function answered(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('portolan_http_requests_total{') && !/operation="(getHealth|getFailoverStatus)"/.test(line))
      sum += Number(line.split(' ').at(-1));
  return sum;
}

t.test(
  "the workflows of every interface, spread request by request over two processes of each role behind HAProxy, give one process's results",
  async (t) => {
    const [cluster, single] = await Promise.all([startCluster(t, { env: SETTINGS }), startCluster(t, { layout: 'single', env: SETTINGS })]);
    if (!cluster || !single) return;
    const [alone, spread] = await Promise.all([conformanceOf(single), conformanceOf(cluster)]);

    const one = verdicts(alone);
    const many = verdicts(spread);
    t.ok(one.size > 90, `${one.size} checks ran on one process`);
    t.same([...many.keys()].sort(), [...one.keys()].sort(), 'the same checks ran on both');
    const differing = [...one]
      .filter(([key, outcome]) => many.get(key) !== outcome)
      .map(([key, outcome]) => `${key}: ${outcome} alone (${why(alone, key)}), ${many.get(key)} spread (${why(spread, key)})`);
    const failing = [...many]
      .filter(([, outcome]) => outcome !== 'pass')
      .map(([key, outcome]) => `${key}: ${outcome} (${why(spread, key)})`);
    const conflicts = compareRuns(alone, spread)
      .filter((d) => d.conflict)
      .map((d) => `${d.key} (${d.interface} ${d.operationId}): ${d.detail}`);
    t.same(differing, [], 'every check has the same verdict');
    t.same(failing, [], 'and every check passes behind HAProxy');
    t.same(conflicts, [], 'request by request, the same status and the same body shape');
    t.equal(unmatched(alone, spread), 0, 'and the same requests were sent');

    // Request by request over both processes: each one of every role answered part of the workflows (of the
    // device pair, the standby its reads).
    for (const role of ROLE_NAMES) {
      const counts = await Promise.all(cluster.nodes.filter((n) => n.role === role).map((n) => answered(n.url)));
      t.ok(counts.length === 2 && counts.every((n) => n > 0), `both ${role} processes answered requests (${counts.join(' and ')})`);
    }
  },
);
