import { readDataFile } from './data-files.ts';
import type { Check, OperationResult, ProbeResult, Violation } from './model.ts';

/**
 * A way a target is known to break its spec, kept as data with the reason (`--known-failures
 * <file>`): e.g. where a mock product answers differently from the specs it mocks. The run reports
 * these with their reason instead of failing on them, and fails when one no longer happens, so the
 * list stays exact as the target changes in either direction.
 */
export type KnownFailure = {
  /** Why the target breaks the spec here: printed with every violation it names. */
  why: string;
  /** Every operation it happens on: `<interface> <operationId>@<role>`. */
  operations: string[];
  /** The probe, `<kind>: <name>` as in the report (`invalid: body that is not JSON`); `*` matches any text (`*` alone: every probe). */
  probe: string;
  check: Check;
  /** The answer's status; absent: any (a transport failure has none). */
  status?: number;
  /** The violation's JSON pointer; absent: any. */
  pointer?: string;
};

const CHECKS: Check[] = [
  'status',
  'content-type',
  'header',
  'body',
  'server-error',
  'rejects-invalid',
  'expectation',
  'transport',
  'setup',
];

/** Reads a known-failures file (a YAML list), checked against its schema. */
export function loadKnownFailures(path: string): KnownFailure[] {
  return readDataFile<KnownFailure[]>(path, {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['why', 'operations', 'probe', 'check'],
      properties: {
        why: { type: 'string', minLength: 10 },
        operations: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[a-z-]+ [A-Za-z0-9_]+@[a-z]+$' } },
        probe: { type: 'string', pattern: '^([*]|(valid|invalid|auth): .+)$' },
        check: { enum: CHECKS },
        status: { type: 'integer' },
        pointer: { type: 'string' },
      },
    },
  });
}

export const operationKey = (o: Pick<OperationResult, 'interface' | 'operationId' | 'role'>) => `${o.interface} ${o.operationId}@${o.role}`;
export const probeLabel = (p: Pick<ProbeResult, 'kind' | 'name'>) => `${p.kind}: ${p.name}`;

/**
 * Marks each violation of the operations' probes that a known failure names (`known` = its why). A
 * probe, and an operation, whose every violation is known becomes `known-failure`; one with any
 * other violation stays `fail`. Scenario and fuzzing violations are never known failures.
 * Returns the known failures that did not happen, one line per entry and operation.
 */
export function applyKnownFailures(operations: OperationResult[], known: readonly KnownFailure[]): string[] {
  const met = new Set<string>();
  for (const op of operations) {
    const key = operationKey(op);
    for (const probe of op.probes) {
      for (const v of probe.violations) {
        const entry = known.find((k) => matches(k, key, probe, v));
        if (!entry) continue;
        v.known = entry.why;
        met.add(`${known.indexOf(entry)} ${key}`);
      }
      if (probe.outcome === 'fail' && probe.violations.every((v) => v.known)) probe.outcome = 'known-failure';
    }
    if (op.outcome === 'fail' && !op.probes.some((p) => p.outcome === 'fail')) op.outcome = 'known-failure';
  }
  return known.flatMap((k, i) =>
    k.operations
      .filter((o) => !met.has(`${i} ${o}`))
      .map((o) => `${o} ${k.probe}: ${k.check}${k.status ? ` (${k.status})` : ''} did not happen (listed because: ${k.why})`),
  );
}

function matches(k: KnownFailure, key: string, probe: ProbeResult, v: Violation): boolean {
  return (
    k.operations.includes(key) &&
    glob(k.probe).test(probeLabel(probe)) &&
    k.check === v.check &&
    (k.status === undefined || k.status === probe.status) &&
    (k.pointer === undefined || k.pointer === v.pointer)
  );
}

const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/**
 * The known failure saying that the target never answers this probe (check `transport`), if any: such a
 * probe is given a short deadline instead of the run's timeout (the failure is still seen, sooner).
 *
 * @example knownNoAnswer(known, 'mapping createChart@mapping', 'invalid: body that is not JSON')?.why
 */
export function knownNoAnswer(known: readonly KnownFailure[], operation: string, probe: string): KnownFailure | undefined {
  return known.find((k) => k.check === 'transport' && k.operations.includes(operation) && glob(k.probe).test(probe));
}

/**
 * The entries as far as this run can judge them: each entry's operations that were checked (answered
 * at least one request), the others left out, and entries left with none dropped. A run of some specs,
 * or of a target that serves some roles, is then not failed by entries about the rest.
 *
 * @example applyKnownFailures(operations, checkedOnly(known, operations));
 */
export function checkedOnly(known: readonly KnownFailure[], operations: readonly OperationResult[]): KnownFailure[] {
  const checked = new Set(operations.filter((o) => !o.notServed && o.probes.some((p) => p.outcome !== 'skipped')).map(operationKey));
  return known.map((k) => ({ ...k, operations: k.operations.filter((o) => checked.has(o)) })).filter((k) => k.operations.length > 0);
}
