import { uncovered } from './coverage.ts';
import type { Difference } from './differential.ts';
import type { RunResult } from './model.ts';
import { knownFailureList, notImplementedByInterface } from './report-text.ts';

export type Verdict = { ok: boolean; reasons: string[] };

export type VerdictOptions = {
  /** Operations and scenarios that answer 501 fail the run too (off by default). */
  strict?: boolean;
  /** A documented status that nothing exercised and nothing explains fails the run (off by default). */
  requireCoverage?: boolean;
  differences?: readonly Difference[];
};

/**
 * Whether the run passes: no violation anywhere (known failures aside, each of which must have
 * happened) and no conflicting difference. "Not implemented"
 * never counts as passing but fails the run only with `strict`: against the reference server
 * during development, unimplemented operations are listed, not failed.
 */
export function verdict(result: RunResult, options: VerdictOptions = {}): Verdict {
  const reasons: string[] = [];
  const t = result.totals;
  const failed = t.operations.fail + t.scenarios.fail + t.fuzz.fail;
  if (failed > 0) reasons.push(`${failed} failed check${failed === 1 ? '' : 's'} (${t.violations} violations)`);
  const unmet = result.unmetKnownFailures.length;
  if (unmet > 0) reasons.push(`${unmet} known failure${unmet === 1 ? '' : 's'} did not happen (update the known-failures list)`);
  const conflicts = (options.differences ?? []).filter((d) => d.conflict).length;
  if (conflicts > 0) reasons.push(`${conflicts} conflicting difference${conflicts === 1 ? '' : 's'} between the targets`);
  const notImplemented = t.operations.notImplemented + t.scenarios.notImplemented;
  if (options.strict && notImplemented > 0) reasons.push(`${notImplemented} not implemented (--strict)`);
  const missing = uncovered(result.coverage).length;
  if (options.requireCoverage && missing > 0) reasons.push(`${missing} documented statuses not covered (--require-coverage)`);
  return { ok: reasons.length === 0, reasons };
}

/** The JSON summary (`--json out.json`): totals, lists and every result, without response bodies. */
export function toJsonSummary(result: RunResult, options: VerdictOptions & { compareTargets?: Record<string, string> } = {}) {
  const v = verdict(result, options);
  return {
    version: 1,
    ok: v.ok,
    reasons: v.reasons,
    seed: result.seed,
    safe: result.safe,
    stateless: result.stateless,
    fuzzRuns: result.fuzzRuns,
    startedAt: result.startedAt,
    durationMs: result.durationMs,
    targets: result.targets,
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
