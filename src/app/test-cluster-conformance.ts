// Test helper: the conformance workflows of every interface against a test system (test-cluster.ts), and the
// comparison of two runs: one process's and a layout of several (scale-out.test.ts, scale-out-workers.test.ts).
import { runConformance } from '../../conformance/run.ts';
import { compareRuns, unmatched } from '../../conformance/differential.ts';
import type { RunResult } from '../../conformance/model.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { CLUSTER_REGISTRATION_USER, type Cluster } from './test-cluster.ts';

/** Small enough that the rate-limit scenario's window is quick to use up. */
const RATE_LIMIT = 40;
/** The settings every system of the comparison gets. */
export const CONFORMANCE_SETTINGS = { PORTOLAN_RATE_LIMIT_LIMIT: String(RATE_LIMIT) };
const SEED = 20250314;

/** The conformance suite (every operation, every scenario) against one system. */
export const conformanceOf = (system: Cluster) =>
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

/**
 * Asserts that `spread` (the run against several processes, `where`: "behind HAProxy") gives `alone`'s (one
 * process's) results: every check's verdict, every check passing, request by request the same status and body
 * shape, the same requests.
 */
export function assertSameResults(t: TapTest, alone: RunResult, spread: RunResult, where: string): void {
  const one = verdicts(alone);
  const many = verdicts(spread);
  t.ok(one.size > 90, `${one.size} checks ran on one process`);
  t.same([...many.keys()].sort(), [...one.keys()].sort(), 'the same checks ran on both');
  const differing = [...one]
    .filter(([key, outcome]) => many.get(key) !== outcome)
    .map(([key, outcome]) => `${key}: ${outcome} alone (${why(alone, key)}), ${many.get(key)} spread (${why(spread, key)})`);
  const failing = [...many].filter(([, outcome]) => outcome !== 'pass').map(([key, outcome]) => `${key}: ${outcome} (${why(spread, key)})`);
  const conflicts = compareRuns(alone, spread)
    .filter((d) => d.conflict)
    .map((d) => `${d.key} (${d.interface} ${d.operationId}): ${d.detail}`);
  t.same(differing, [], 'every check has the same verdict');
  t.same(failing, [], `and every check passes ${where}`);
  t.same(conflicts, [], 'request by request, the same status and the same body shape');
  t.equal(unmatched(alone, spread), 0, 'and the same requests were sent');
}

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
