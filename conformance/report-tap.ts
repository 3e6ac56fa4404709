import { formatViolation, type ProbeResult, type RunResult, type Violation } from './model.ts';

type Point = { ok: boolean; description: string; directive?: string; details?: Record<string, unknown> };

/**
 * The run as TAP 14: one test point per operation and role, per scenario and per fuzzed operation.
 * Not implemented (501) and skipped checks are `# SKIP` points with the reason: never counted as passes.
 * An operation that fails only as the known-failures list says is `not ok ... # TODO known failure`,
 * each violation with its reason; a listed failure that did not happen is a failing point of its own.
 */
export function toTap(result: RunResult, extra: readonly Point[] = []): string {
  const points: Point[] = [];
  for (const op of result.operations) {
    const description = `${op.interface} ${op.operationId} ${op.method} ${op.path} @${op.role}`;
    if (op.outcome === 'not-implemented')
      points.push({ ok: true, description, directive: `SKIP not implemented: ${op.reason ?? 'answers 501'}` });
    else if (op.outcome === 'skipped')
      points.push({ ok: true, description, directive: `SKIP ${op.reason ?? ''}${op.hint ? ` — hint: ${op.hint}` : ''}` });
    else {
      const line = (p: ProbeResult, v: Violation) => `${p.kind} ${p.name} -> ${p.status ?? 'no answer'}: ${formatViolation(v)}`;
      const all = op.probes.flatMap((p) => p.violations.map((v) => ({ p, v })));
      const failures = all.filter(({ v }) => !v.known).map(({ p, v }) => line(p, v));
      const known = all.filter(({ v }) => v.known).map(({ p, v }) => line(p, v));
      const why = [...new Set(all.map(({ v }) => v.known).filter((w) => w !== undefined))];
      const reproduce = op.probes
        .filter((p) => p.violations.length > 0 && p.reproduce)
        .map((p) => new Block(`# ${p.kind} ${p.name}\n${p.reproduce}`));
      points.push({
        ok: op.outcome !== 'fail' && op.outcome !== 'known-failure',
        description: `${description} (${op.probes.length} requests)`,
        ...(op.outcome === 'known-failure' ? { directive: 'TODO known failure' } : {}),
        ...(failures.length + known.length > 0
          ? {
              details: {
                ...(failures.length > 0 ? { failures } : {}),
                ...(known.length > 0 ? { known, why } : {}),
                ...(reproduce.length > 0 ? { reproduce } : {}),
              },
            }
          : {}),
      });
    }
  }
  for (const s of result.scenarios) {
    const description = `scenario ${s.name}`;
    if (s.outcome === 'not-implemented') points.push({ ok: true, description, directive: `SKIP not implemented: ${s.reason}` });
    else if (s.outcome === 'skipped') points.push({ ok: true, description, directive: `SKIP ${s.reason}` });
    else {
      const failed = s.steps.filter((st) => st.outcome === 'fail');
      points.push({
        ok: s.outcome === 'pass',
        description: `${description} (${s.steps.length} steps, ${s.steps.reduce((n, st) => n + st.requests, 0)} requests)`,
        ...(s.outcome === 'fail'
          ? {
              details: {
                reason: s.reason,
                failures: failed.flatMap((st) => st.violations.map((v) => `${st.name}: ${formatViolation(v)}`)),
                ...(failed.some((st) => st.reproduce)
                  ? { reproduce: failed.filter((st) => st.reproduce).map((st) => new Block(`# ${st.name}\n${st.reproduce}`)) }
                  : {}),
              },
            }
          : {}),
      });
    }
  }
  for (const f of result.fuzz) {
    const description = `fuzz ${f.interface} ${f.operationId} @${f.role} (${f.runs} runs, seed ${f.seed})`;
    if (f.outcome === 'skipped' || f.outcome === 'not-implemented')
      points.push({ ok: true, description, directive: `SKIP ${f.reason ?? f.outcome}` });
    else {
      points.push({
        ok: f.outcome === 'pass',
        description,
        ...(f.failure
          ? {
              details: {
                seed: f.seed,
                path: f.failure.path,
                request: f.failure.request,
                failures: f.failure.violations.map(formatViolation),
                ...(f.failure.reproduce ? { reproduce: [new Block(f.failure.reproduce)] } : {}),
              },
            }
          : {}),
      });
    }
  }
  for (const unmet of result.unmetKnownFailures) points.push({ ok: false, description: `known failure did not happen: ${unmet}` });
  points.push(...extra);

  const lines = [
    'TAP version 14',
    `# targets: ${Object.entries(result.targets)
      .map(([k, v]) => (k === '*' ? v : `${k}=${v}`))
      .join(' ')}`,
  ];
  lines.push(
    `# seed ${result.seed} (--seed ${result.seed} repeats the run), safe mode ${result.safe ? 'on' : 'off'}, ${result.stateless ? 'stateless, ' : ''}fuzzing ${result.fuzzRuns > 0 ? `${result.fuzzRuns} runs per operation` : 'off'}`,
  );
  points.forEach((p, i) => {
    lines.push(`${p.ok ? 'ok' : 'not ok'} ${i + 1} - ${p.description.replaceAll('#', '\\#')}${p.directive ? ` # ${p.directive}` : ''}`);
    if (p.details) lines.push('  ---', ...yaml(p.details, '  '), '  ...');
  });
  lines.push(`1..${points.length}`);
  return `${lines.join('\n')}\n`;
}

/** A TAP point for each operation where two targets disagree (see differential.ts). */
export function tapPoint(ok: boolean, description: string, details?: Record<string, unknown>): Point {
  return { ok, description, ...(details ? { details } : {}) };
}

/** Text printed as a YAML literal block (`|-`): a shell command stays as it is, ready to copy. */
class Block {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Flat YAML for the diagnostic blocks: strings JSON-quoted (valid YAML), lists one item a line, Blocks as literal blocks. */
function yaml(details: Record<string, unknown>, indent: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(details)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      out.push(`${indent}${key}:`);
      for (const item of value) {
        if (item instanceof Block) out.push(`${indent}  - |-`, ...literal(item.text, `${indent}    `));
        else out.push(`${indent}  - ${JSON.stringify(String(item))}`);
      }
    } else out.push(`${indent}${key}: ${JSON.stringify(value)}`);
  }
  return out;
}

/** A literal block's lines (control characters other than tab shown as \uXXXX: a literal block cannot hold them). */
const literal = (text: string, indent: string) =>
  text
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .split('\n')
    .map((line) => `${indent}${line}`);

export type { Point as TapPoint };
