import { uncovered } from './coverage.ts';
import type { RunResult } from './model.ts';
import { knownFailureList, notImplementedByInterface } from './report-text.ts';
import { fuzzCounts, headline, operationCounts, verdict, type VerdictOptions } from './verdict.ts';

// The verdict lives in verdict.ts (the headline reads it too); kept exported here, where it always was.
export { verdict, type Verdict, type VerdictOptions } from './verdict.ts';

/**
 * The JSON summary (`--json out.json`): the verdict, the headline and its `counts` (operationCounts),
 * totals, lists and every result, without response bodies.
 */
export function toJsonSummary(result: RunResult, options: VerdictOptions & { compareTargets?: Record<string, string> } = {}) {
  const v = verdict(result, options);
  return {
    version: 1,
    ok: v.ok,
    reasons: v.reasons,
    headline: headline(result, options),
    counts: operationCounts(result),
    fuzzCounts: fuzzCounts(result),
    seed: result.seed,
    safe: result.safe,
    stateless: result.stateless,
    fuzzRuns: result.fuzzRuns,
    startedAt: result.startedAt,
    durationMs: result.durationMs,
    targets: result.targets,
    ...(result.routing ? { routing: result.routing } : {}),
    ...(result.writes ? { writes: result.writes } : {}),
    totals: result.totals,
    notImplemented: Object.fromEntries(notImplementedByInterface(result)),
    uncovered: uncovered(result.coverage),
    knownFailures: knownFailureList(result),
    unmetKnownFailures: result.unmetKnownFailures,
    operations: result.operations.map((o) => ({ ...o, probes: o.probes.map(({ shape: _shape, ...p }) => p) })),
    scenarios: result.scenarios.map((s) => ({ ...s, steps: s.steps.map(({ shape: _shape, ...st }) => st) })),
    fuzz: result.fuzz,
    coverage: result.coverage,
    ...(options.compareTargets ? { differential: { targets: options.compareTargets, differences: options.differences ?? [] } } : {}),
  };
}
