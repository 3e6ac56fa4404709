import { uncovered } from './coverage.ts';
import type { Difference } from './differential.ts';
import type { OperationResult, RunResult } from './model.ts';

/**
 * What a run means, in one verdict and one headline line. PASS only when nothing failed; the headline
 * never hides what was not tested: how many operations answered 501 (not implemented), how many were
 * skipped, how many documented statuses nothing covered. Every report (text, TAP, JUnit, JSON) reads
 * its counts from here.
 */

export type Verdict = { ok: boolean; reasons: string[] };

export type VerdictOptions = {
  /** Operations and scenarios that answer 501 fail the run too (`--require-implemented`; off by default). */
  requireImplemented?: boolean;
  /** The former name of `requireImplemented` (`--strict`): either one turns 501s into failures. */
  strict?: boolean;
  /** A documented status that nothing exercised and nothing explains fails the run (off by default). */
  requireCoverage?: boolean;
  differences?: readonly Difference[];
};

/**
 * Operations of the run's specs, each counted once however many roles it was checked on: `conformant`
 * (exercised and every answer conformed), `notImplemented` (answered 501 and failed nowhere), `failing`,
 * `knownFailure` (fails only as the known-failures list says), `skipped` (no credentials, safe mode, a
 * read-only run), `notServed` (the target does not serve its role), and the documented statuses nothing
 * covered. `conformant + notImplemented + failing + knownFailure + skipped + notServed = operations`.
 */
export type OperationCounts = {
  operations: number;
  conformant: number;
  notImplemented: number;
  failing: number;
  knownFailure: number;
  skipped: number;
  notServed: number;
  uncoveredStatuses: number;
};

type OperationClass = keyof Omit<OperationCounts, 'operations' | 'uncoveredStatuses'>;

/**
 * One operation's class across its roles: a failure anywhere wins, then a known failure, then a 501, then
 * a pass; not served when no role serves it.
 */
function classOf(results: readonly { outcome: OperationResult['outcome']; notServed?: unknown }[]): OperationClass {
  const has = (outcome: OperationResult['outcome']) => results.some((r) => r.outcome === outcome);
  if (has('fail')) return 'failing';
  if (has('known-failure')) return 'knownFailure';
  if (has('not-implemented')) return 'notImplemented';
  if (has('pass')) return 'conformant';
  if (results.every((r) => r.notServed)) return 'notServed';
  return 'skipped';
}

/**
 * The fuzzed operations, each counted once however many roles it was fuzzed on (a failure anywhere wins):
 * `pass + fail + notImplemented + skipped = operations`.
 *
 * @example fuzzCounts(result) // { operations: 44, pass: 44, fail: 0, notImplemented: 0, skipped: 0 }
 */
export function fuzzCounts(result: Pick<RunResult, 'fuzz'>) {
  const counts = { operations: 0, pass: 0, fail: 0, notImplemented: 0, skipped: 0 };
  for (const results of Map.groupBy(result.fuzz, (f) => `${f.interface} ${f.operationId}`).values()) {
    counts.operations++;
    const c = classOf(results);
    if (c === 'failing') counts.fail++;
    else if (c === 'notImplemented') counts.notImplemented++;
    else if (c === 'conformant') counts.pass++;
    else counts.skipped++;
  }
  return counts;
}

export function operationCounts(result: RunResult): OperationCounts {
  const counts: OperationCounts = {
    operations: 0,
    conformant: 0,
    notImplemented: 0,
    failing: 0,
    knownFailure: 0,
    skipped: 0,
    notServed: 0,
    uncoveredStatuses: uncovered(result.coverage).length,
  };
  for (const results of Map.groupBy(result.operations, (o) => `${o.interface} ${o.operationId}`).values()) {
    counts.operations++;
    counts[classOf(results)]++;
  }
  return counts;
}

/**
 * Whether the run passes: no violation anywhere (known failures aside, each of which must have
 * happened) and no conflicting difference. "Not implemented" never counts as passing but fails the
 * run only with `requireImplemented`: a team's own build may implement part of the specs, and the
 * headline says how much.
 */
export function verdict(result: RunResult, options: VerdictOptions = {}): Verdict {
  const reasons: string[] = [];
  const t = result.totals;
  // In the summary's units: operations (each once, however many roles), scenarios, fuzzed operations.
  const failed = [
    plural(operationCounts(result).failing, 'operation'),
    plural(t.scenarios.fail, 'scenario'),
    plural(fuzzCounts(result).fail, 'fuzzed operation'),
  ].filter((p) => p !== undefined);
  if (failed.length > 0) reasons.push(`${listed(failed)} failed (${t.violations} violation${t.violations === 1 ? '' : 's'})`);
  const unmet = result.unmetKnownFailures.length;
  if (unmet > 0) reasons.push(`${unmet} known failure${unmet === 1 ? '' : 's'} did not happen (update the known-failures list)`);
  const conflicts = (options.differences ?? []).filter((d) => d.conflict).length;
  if (conflicts > 0) reasons.push(`${conflicts} conflicting difference${conflicts === 1 ? '' : 's'} between the targets`);
  const notImplemented = t.operations.notImplemented + t.scenarios.notImplemented;
  if ((options.requireImplemented || options.strict) && notImplemented > 0)
    reasons.push(`${notImplemented} not implemented (--require-implemented)`);
  const missing = uncovered(result.coverage).length;
  if (options.requireCoverage && missing > 0) reasons.push(`${missing} documented statuses not covered (--require-coverage)`);
  return { ok: reasons.length === 0, reasons };
}

/**
 * The one line that says what the run means, e.g.
 * `PASS: 28 of 66 operations implemented and conformant; 38 answer 501 (not implemented); 0 documented statuses not covered`
 * or `FAIL: ...; 2 fail; ... (2 failed checks (3 violations))`. The 501 and uncovered counts are always there.
 *
 * @example
 * console.log(headline(result, { requireImplemented: true }));
 */
export function headline(result: RunResult, options: VerdictOptions = {}): string {
  const v = verdict(result, options);
  const c = operationCounts(result);
  const parts = [
    `${c.conformant} of ${c.operations} operation${c.operations === 1 ? '' : 's'} implemented and conformant`,
    ...(c.failing > 0 ? [`${c.failing} fail`] : []),
    ...(c.knownFailure > 0 ? [`${c.knownFailure} fail as listed known failures`] : []),
    `${c.notImplemented} answer${c.notImplemented === 1 ? 's' : ''} 501 (not implemented)`,
    ...(c.skipped > 0 ? [`${c.skipped} skipped`] : []),
    ...(c.notServed > 0 ? [`${c.notServed} not served by this target`] : []),
    `${c.uncoveredStatuses} documented status${c.uncoveredStatuses === 1 ? '' : 'es'} not covered`,
  ];
  return `${v.ok ? 'PASS' : 'FAIL'}: ${parts.join('; ')}${v.ok ? '' : ` (${v.reasons.join('; ')})`}`;
}

const plural = (n: number, what: string) => (n > 0 ? `${n} ${what}${n === 1 ? '' : 's'}` : undefined);
const listed = (parts: readonly string[]) => (parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0]!);
