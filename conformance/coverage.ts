import type { Observation } from './answer-check.ts';
import type { Unreachable } from './data-files.ts';
import type { CoverageMark, CoverageRow, OperationResult } from './model.ts';
import { GATEWAY_RESPONSES, type LoadedSpec, type SpecSet } from './spec-set.ts';

/**
 * The coverage matrix: every documented status of every operation of the chosen specs (and the
 * gateway responses when the rate-limit spec is chosen), marked exercised when an answer with it was
 * seen, else unreachable when data/unreachable.yaml says why, else not implemented / skipped as the
 * operation was, else not covered.
 */
export function buildCoverage(
  specs: SpecSet,
  chosen: readonly LoadedSpec[],
  operations: readonly OperationResult[],
  observations: readonly Observation[],
  unreachable: readonly Unreachable[],
): CoverageRow[] {
  const seen = new Map<string, Set<number>>();
  for (const o of observations) {
    const key = `${o.interface} ${o.operationId}`;
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(o.status);
  }
  const rows: CoverageRow[] = [];
  const entries = chosen.flatMap((spec) => spec.operations.map((op) => ({ spec, op })));
  if (specs.gateway && chosen.some((s) => s.name === 'rate-limit')) entries.push(specs.gateway);
  for (const { spec, op } of entries) {
    const statuses = Object.keys((op.operation.responses ?? {}) as Record<string, unknown>);
    const observed = seen.get(`${spec.name} ${op.operationId}`) ?? new Set<number>();
    const results = operations.filter((r) => r.interface === spec.name && r.operationId === op.operationId);
    const row: CoverageRow = { interface: spec.name, operationId: op.operationId, statuses: {}, reasons: {} };
    for (const status of statuses) {
      const hit = [...observed].some(
        (s) => String(s) === status || (/^\dXX$/i.test(status) && String(s)[0] === status[0]) || status === 'default',
      );
      const listed = unreachable.find(
        (u) => u.interface === spec.name && (u.operation === op.operationId || u.operation === '*') && u.status === status,
      );
      let mark: CoverageMark = 'uncovered';
      if (hit) mark = 'exercised';
      else if (listed) {
        mark = 'unreachable';
        row.reasons[status] = listed.reason;
      } else if (results.length > 0 && results.every((r) => r.outcome === 'not-implemented')) mark = 'not-implemented';
      else if (op.operationId !== GATEWAY_RESPONSES && results.every((r) => r.outcome === 'skipped' || r.outcome === 'not-implemented')) {
        mark = 'skipped';
        row.reasons[status] = results[0]?.reason ?? 'no target';
      }
      row.statuses[status] = mark;
    }
    rows.push(row);
  }
  return rows;
}

/** Statuses of implemented operations that nothing exercised and nothing explains. */
export function uncovered(rows: readonly CoverageRow[]): string[] {
  return rows.flatMap((r) =>
    Object.entries(r.statuses)
      .filter(([, m]) => m === 'uncovered')
      .map(([s]) => `${r.interface} ${r.operationId} ${s}`),
  );
}
