import type { RunResult } from './model.ts';

/** One place where two targets answered the same request differently. */
export type Difference = {
  /** The probe or scenario step (same id on both sides: same specs, same seed). */
  key: string;
  interface: string;
  operationId: string;
  what: 'status' | 'shape';
  a: string;
  b: string;
  /**
   * A conflict fails the run: another status, or another JSON type at the same place of the body.
   * A field present on one side only is listed but is no conflict (data may differ).
   */
  conflict: boolean;
  detail: string;
};

type Answer = { interface: string; operationId: string; status?: number; shape?: string[] };

/**
 * Compares two runs request by request (every probe and scenario step that both sent): where the
 * status differs, and where the body's shape differs (types at the same JSON pointer; fields only
 * one side sent). Values are not compared: two targets hold different data.
 */
export function compareRuns(a: RunResult, b: RunResult): Difference[] {
  const left = answers(a);
  const right = answers(b);
  const differences: Difference[] = [];
  for (const [key, x] of left) {
    const y = right.get(key);
    if (!y) continue;
    const base = { key, interface: x.interface, operationId: x.operationId };
    if (x.status !== y.status) {
      differences.push({
        ...base,
        what: 'status',
        a: String(x.status ?? 'no answer'),
        b: String(y.status ?? 'no answer'),
        conflict: true,
        detail: `status ${x.status ?? 'no answer'} vs ${y.status ?? 'no answer'}`,
      });
      continue;
    }
    if (!x.shape || !y.shape) continue;
    const tx = types(x.shape);
    const ty = types(y.shape);
    const conflicts = [...tx.keys()]
      .filter((p) => ty.has(p) && tx.get(p) !== ty.get(p))
      .map((p) => `${p || '(root)'}: ${tx.get(p)} vs ${ty.get(p)}`);
    const onlyA = [...tx.keys()].filter((p) => !ty.has(p));
    const onlyB = [...ty.keys()].filter((p) => !tx.has(p));
    if (conflicts.length === 0 && onlyA.length === 0 && onlyB.length === 0) continue;
    const detail = [
      ...conflicts.map((c) => `type ${c}`),
      ...(onlyA.length > 0 ? [`only in A: ${list(onlyA)}`] : []),
      ...(onlyB.length > 0 ? [`only in B: ${list(onlyB)}`] : []),
    ].join('; ');
    differences.push({ ...base, what: 'shape', a: summary(tx), b: summary(ty), conflict: conflicts.length > 0, detail });
  }
  return differences;
}

/** Requests sent on one side only (another set of roles, a scenario stopped earlier). */
export function unmatched(a: RunResult, b: RunResult): number {
  const left = answers(a);
  const right = answers(b);
  return [...left.keys()].filter((k) => !right.has(k)).length + [...right.keys()].filter((k) => !left.has(k)).length;
}

function answers(run: RunResult): Map<string, Answer> {
  const found = new Map<string, Answer>();
  for (const op of run.operations) {
    for (const p of op.probes) {
      if (p.status === undefined && p.violations.length === 0) continue;
      found.set(p.id, { interface: op.interface, operationId: op.operationId, status: p.status, shape: p.shape });
    }
  }
  for (const s of run.scenarios) {
    for (const st of s.steps) {
      if (!st.operationId) continue;
      found.set(`scenario ${st.id}`, {
        interface: 'scenario',
        operationId: `${s.name}/${st.operationId}`,
        status: st.status,
        shape: st.shape,
      });
    }
  }
  return found;
}

/** pointer -> type, from `pointer:type` entries (arrays of mixed items give `a|b`). */
function types(shape: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of shape) {
    const at = entry.lastIndexOf(':');
    const pointer = entry.slice(0, at);
    const type = entry.slice(at + 1);
    map.set(pointer, map.has(pointer) ? [...new Set([...map.get(pointer)!.split('|'), type])].sort().join('|') : type);
  }
  return map;
}

const list = (items: string[]) => (items.length > 6 ? `${items.slice(0, 6).join(', ')} and ${items.length - 6} more` : items.join(', '));
const summary = (t: Map<string, string>) => `${t.size} fields`;

/** Readable lines: each difference with its operation, what differs and how. */
export function differentialLines(differences: readonly Difference[], labels: { a: string; b: string }, unmatchedCount: number): string[] {
  const conflicts = differences.filter((d) => d.conflict).length;
  const lines = [
    `differential: A = ${labels.a}, B = ${labels.b}: ${differences.length} difference${differences.length === 1 ? '' : 's'}, ${conflicts} conflicting${unmatchedCount > 0 ? `; ${unmatchedCount} requests sent to one side only (not compared)` : ''}`,
  ];
  for (const d of differences) lines.push(`  ${d.conflict ? 'CONFLICT' : 'note    '} ${d.key}: ${d.detail}`);
  return lines;
}
