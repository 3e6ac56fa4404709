import { uncovered } from './coverage.ts';
import { hintsOf } from './hints.ts';
import { operationKey, probeLabel } from './known-failures.ts';
import type { CoverageMark, RunResult, Totals } from './model.ts';
import { READ_ONLY_SKIP } from './operation-check.ts';
import { SCENARIO_READ_ONLY_SKIP } from './scenario-runner.ts';
import { fuzzCounts, headline, operationCounts, type VerdictOptions } from './verdict.ts';

const MARK: Record<CoverageMark, string> = { exercised: 'x', unreachable: 'u', uncovered: '-', 'not-implemented': 'n', skipped: 's' };

/**
 * Lines of the readable summary: first the headline (verdict.ts: PASS or FAIL with how many operations
 * are implemented and conformant, answer 501, fail, and how many documented statuses nothing covered),
 * then the counts as sums (operations, each once however many roles it was checked on; scenarios; fuzzed
 * operations), whether writes were sent, what is not implemented, not served or skipped, the known
 * failures, the hints and the coverage. `options` are the verdict's (`requireImplemented`,
 * `requireCoverage`, `differences`).
 */
export function summaryLines(result: RunResult, options: VerdictOptions = {}): string[] {
  const t = result.totals;
  const c = operationCounts(result);
  const f = fuzzCounts(result);
  const checks = result.operations.length;
  const lines = [
    headline(result, options),
    `operations: ${c.operations} = ${c.conformant} conformant + ${c.failing} fail + ${c.knownFailure} known failures + ${c.notImplemented} not implemented (501) + ${c.skipped} skipped + ${c.notServed} not served by this target${checks !== c.operations ? ` (each operation counted once; ${checks} checks of an operation on a role)` : ''}`,
    `scenarios: ${result.scenarios.length} = ${sum(t.scenarios, 'pass')}`,
    `fuzzing: ${result.fuzzRuns > 0 ? `${f.operations} operations = ${f.pass} pass + ${f.fail} fail + ${f.notImplemented} not implemented + ${f.skipped} skipped (${result.fuzzRuns} runs each)` : 'off'}`,
  ];
  if (result.routing) lines.push(`roles: ${result.routing}`);
  if (result.writes) {
    const ops = result.operations.filter((o) => o.reason?.startsWith(READ_ONLY_SKIP)).length;
    const scenarios = result.scenarios.filter((s) => s.reason?.startsWith(SCENARIO_READ_ONLY_SKIP)).length;
    lines.push(
      result.writes.sent
        ? `writes: sent (${result.writes.why})`
        : `writes: not sent (${result.writes.why}): ${ops} operation check${ops === 1 ? '' : 's'} and ${scenarios} scenario${scenarios === 1 ? '' : 's'} that write were skipped; --allow-writes sends them, and what they create stays in the target`,
    );
  }
  const notImplemented = notImplementedByInterface(result);
  if (notImplemented.length > 0) {
    lines.push('not implemented (answer 501; never counted as passing):');
    for (const [name, ops] of notImplemented) lines.push(`  ${name}: ${ops.join(', ')}`);
    const scenarios = result.scenarios.filter((s) => s.outcome === 'not-implemented').map((s) => s.name);
    if (scenarios.length > 0) lines.push(`  scenarios: ${scenarios.join(', ')}`);
  }
  const unserved = result.operations.filter((o) => o.notServed);
  if (unserved.length > 0) {
    const byRole = Map.groupBy(unserved, (o) => o.notServed!.role);
    lines.push(`not served by this target (${c.notServed} operation${c.notServed === 1 ? '' : 's'}; never counted as failures):`);
    for (const [role, ops] of byRole)
      lines.push(`  ${role} role (${ops[0]!.notServed!.why}): ${ops.map((o) => `${o.interface} ${o.operationId}`).join(', ')}`);
    const roles = [...byRole.keys()].flatMap((r) => r.split('/'));
    lines.push(
      `  to check them, name each role's URL: ${roles.map((r) => `--target ${r}=<url>`).join(' ')}, or --config <file> with every role's URL`,
    );
  }
  const skipped = [
    ...result.operations.filter((o) => !o.notServed),
    ...result.scenarios.map((s) => ({ ...s, interface: 'scenario', operationId: s.name, role: '' })),
  ].filter((o) => o.outcome === 'skipped');
  if (skipped.length > 0) {
    lines.push('skipped:');
    for (const s of skipped) lines.push(`  ${s.interface} ${s.operationId}${s.role ? ` @${s.role}` : ''}: ${s.reason ?? ''}`);
  }
  const known = knownFailureList(result);
  if (known.length > 0) {
    lines.push('known failures (the target breaks its spec here, as the known-failures list says; never counted as passing):');
    for (const [why, items] of Map.groupBy(known, (k) => k.why)) {
      lines.push(`  ${why}`);
      for (const k of items)
        lines.push(`    ${k.operation} ${k.probe} -> ${k.status ?? 'no answer'}: ${k.check} at ${k.pointer || '(root)'}: ${k.message}`);
    }
  }
  if (result.unmetKnownFailures.length > 0) {
    lines.push('known failures that did not happen (each fails the run):');
    for (const unmet of result.unmetKnownFailures) lines.push(`  ${unmet}`);
  }
  const hints = hintsOf(result);
  if (hints.length > 0) {
    lines.push('hints (a known cause explains these failures and skips; the setting to change):');
    for (const h of hints) lines.push(`  ${h.hint} (${h.lines} line${h.lines === 1 ? '' : 's'} above)`);
  }
  const missing = uncovered(result.coverage);
  lines.push(
    `coverage: ${count(result, 'exercised')} statuses exercised, ${count(result, 'unreachable')} unreachable (reasons below), ${missing.length} not covered${missing.length > 0 ? `: ${missing.join('; ')}` : ''}`,
  );
  lines.push(
    `${t.violations} violation${t.violations === 1 ? '' : 's'}${t.knownViolations > 0 ? ` (and ${t.knownViolations} known)` : ''}; checked in ${(result.durationMs / 1000).toFixed(1)} s`,
  );
  return lines;
}

/**
 * The coverage matrix: one line per operation, each documented status marked x exercised,
 * u unreachable, - not covered, n not implemented, s skipped; then the unreachable statuses' reasons.
 */
export function coverageLines(result: RunResult): string[] {
  const width = Math.max(...result.coverage.map((r) => `${r.interface} ${r.operationId}`.length), 10);
  const lines = ['coverage (x exercised, u unreachable, - not covered, n not implemented, s skipped):'];
  for (const row of result.coverage) {
    const cells = Object.entries(row.statuses).map(([status, mark]) => `${status}:${MARK[mark]}`);
    lines.push(`  ${`${row.interface} ${row.operationId}`.padEnd(width)}  ${cells.join(' ')}`);
  }
  const reasons = new Map<string, string[]>();
  for (const row of result.coverage) {
    for (const [status, reason] of Object.entries(row.reasons)) {
      if (row.statuses[status] !== 'unreachable') continue;
      const key = `${row.interface} ${status}: ${reason}`;
      reasons.set(key, [...(reasons.get(key) ?? []), row.operationId]);
    }
  }
  if (reasons.size > 0) {
    lines.push('unreachable:');
    for (const [key, ops] of reasons) lines.push(`  ${key} (${ops.join(', ')})`);
  }
  return lines;
}

/** Every violation a known failure names, with its operation, probe and reason (the JSON summary's `knownFailures`). */
export function knownFailureList(result: RunResult) {
  return result.operations.flatMap((o) =>
    o.probes.flatMap((p) =>
      p.violations
        .filter((v) => v.known)
        .map((v) => ({
          operation: operationKey(o),
          probe: probeLabel(p),
          status: p.status,
          check: v.check,
          pointer: v.pointer,
          message: v.message,
          why: v.known!,
        })),
    ),
  );
}

export function notImplementedByInterface(result: RunResult): [string, string[]][] {
  const byInterface = new Map<string, Set<string>>();
  for (const op of result.operations.filter((o) => o.outcome === 'not-implemented')) {
    if (!byInterface.has(op.interface)) byInterface.set(op.interface, new Set());
    byInterface.get(op.interface)!.add(op.operationId);
  }
  return [...byInterface].map(([name, ops]) => [name, [...ops]]);
}

/** `pass + fail + not implemented + skipped` of scenario totals (scenarios are never known failures nor not served). */
const sum = (t: Totals, pass: string) => `${t.pass} ${pass} + ${t.fail} fail + ${t.notImplemented} not implemented + ${t.skipped} skipped`;
const count = (result: RunResult, mark: CoverageMark) =>
  result.coverage.reduce((n, r) => n + Object.values(r.statuses).filter((m) => m === mark).length, 0);

/** Lines as TAP comments, so the summary can follow the TAP document on stdout. */
export const asComments = (lines: readonly string[]) => lines.map((l) => `# ${l}`).join('\n');
