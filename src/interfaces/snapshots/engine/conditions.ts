import { isIPv4, isIPv6 } from 'node:net';
import type { Fact, FactValue } from './fact.ts';
import type { CollectionName } from './facts.ts';
import type { Comparison, Condition, Predicate, Test } from './rule-types.ts';
import type { SnapshotContent } from './content.ts';
import { VERSION_FORM } from './manifest.ts';

/** Whether a condition holds, and the snapshot-specific lines that say where (empty when it does not hold). */
export type Verdict = { match: boolean; output: string[] };
export type Context = { readonly content: SnapshotContent; readonly facts: (name: CollectionName) => readonly Fact[] };

/** Lines longer than this are matched on their first MAX_LINE characters: a regex never sees more at once. */
export const MAX_LINE = 4096;
const DAY_MS = 24 * 60 * 60 * 1000;
const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);
const miss: Verdict = { match: false, output: [] };

export function evaluateCondition(condition: Condition, context: Context): Verdict {
  const { content } = context;
  switch (condition.kind) {
    case 'all': {
      const output: string[] = [];
      for (const child of condition.of) {
        const verdict = evaluateCondition(child, context);
        if (!verdict.match) return miss;
        output.push(...verdict.output);
      }
      return { match: true, output };
    }
    case 'any': {
      const hits = condition.of.map((child) => evaluateCondition(child, context)).filter((verdict) => verdict.match);
      return { match: hits.length > 0, output: hits.flatMap((verdict) => verdict.output) };
    }
    case 'not':
      return { match: !evaluateCondition(condition.of, context).match, output: [] };
    case 'version': {
      // A device archive that names no version (no VERSION file, nothing in its configuration): no version rule applies.
      if (!VERSION_FORM.test(content.manifest.version)) return miss;
      const version = content.manifest.version.split('.').map(Number);
      const match =
        (!condition.from || compareVersions(version, condition.from) >= 0) &&
        (!condition.before || compareVersions(version, condition.before) < 0);
      return match ? { match, output: [`software version ${content.manifest.version} (${condition.text})`] } : miss;
    }
    case 'present': {
      const found = content.paths.filter((path) => condition.files.regex.test(path));
      return found.length > 0 ? { match: true, output: found.map((path) => `${path} is present`) } : miss;
    }
    case 'missing':
      return content.paths.some((path) => condition.files.regex.test(path))
        ? miss
        : { match: true, output: [`${condition.files.source} is missing`] };
    case 'pattern': {
      let total = 0;
      const output: string[] = [];
      for (const [path, text] of readFiles(content, condition.files.regex)) {
        let count = 0;
        let first = '';
        lines(text).forEach((line, i) => {
          if (!condition.regex.test(line)) return;
          if (count++ === 0) first = `line ${i + 1}: ${clip(line.trim())}`;
        });
        total += count;
        if (count > 0) output.push(`${labelOf(content, path)}: ${count} matching line${count === 1 ? '' : 's'}, first at ${first}`);
      }
      return total >= condition.atLeast ? { match: true, output } : miss;
    }
    case 'json': {
      const value = jsonValue(content.text.get(condition.file), condition.key);
      if (value === undefined || !holds(value, condition.test)) return miss;
      return {
        match: true,
        output: [`${labelOf(content, condition.file)}: ${condition.key.join('.')} is ${clip(JSON.stringify(value), 80)}`],
      };
    }
    case 'extract': {
      const output: string[] = [];
      const taken = Date.parse(content.manifest.generatedAt);
      for (const [path, text] of readFiles(content, condition.files.regex)) {
        for (const line of lines(text)) {
          const groups = condition.regex.exec(line)?.groups;
          const raw = groups?.[condition.value];
          if (!groups || raw === undefined) continue;
          const measured = measure(raw, groups, condition, taken);
          if (measured === undefined || !holds(measured.value, condition.test)) continue;
          const label = condition.label ? `${groups[condition.label] ?? ''}: ` : '';
          output.push(`${labelOf(content, path)}: ${clip(label + measured.text)}`);
        }
      }
      return output.length > 0 ? { match: true, output } : miss;
    }
    case 'each': {
      const hits = context.facts(condition.collection).filter((item) => !condition.where || predicateHolds(condition.where, item));
      if (hits.length < condition.atLeast) return miss;
      const shown = condition.where ? fieldsOf(condition.where) : [];
      return { match: true, output: hits.map((item) => describe(item, shown)) };
    }
  }
}

/** How an output line names a file: a device archive's object (`ltm rule /Common/x (config/bigip.conf)`) or the path. */
const labelOf = (content: SnapshotContent, path: string) => content.labels?.get(path) ?? path;

export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  return 0;
}

function* readFiles(content: SnapshotContent, files: RegExp): Generator<[string, string]> {
  for (const path of content.paths) {
    const text = files.test(path) ? content.text.get(path) : undefined;
    if (text !== undefined) yield [path, text];
  }
}

const lines = (text: string) =>
  text.split('\n').map((line) => (line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line.replace(/\r$/, '')));

/** The value at `key` in a JSON text (own properties only), or undefined. */
function jsonValue(text: string | undefined, key: readonly string[]): unknown {
  let value: unknown;
  try {
    value = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const part of key) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A number taken from an extraction: as written, as a percentage of another group, or as days after the snapshot was taken. */
function measure(
  raw: string,
  groups: Record<string, string | undefined>,
  condition: Extract<Condition, { kind: 'extract' }>,
  taken: number,
) {
  if (condition.as === 'days-after-snapshot') {
    // Calendar days (UTC) from the day the snapshot was taken: an end date of that same day is 0 days away.
    const date = Date.parse(`${raw.slice(0, 10).replaceAll('/', '-')}T00:00:00Z`);
    if (Number.isNaN(date)) return undefined;
    const days = Math.floor(date / DAY_MS) - Math.floor(taken / DAY_MS);
    return { value: days, text: `${raw} (${Math.abs(days)} days ${days < 0 ? 'before' : 'after'} the snapshot was taken)` };
  }
  const value = Number(raw);
  if (!condition.percentOf) return Number.isFinite(value) ? { value, text: raw } : undefined;
  const whole = Number(groups[condition.percentOf]);
  if (!Number.isFinite(value) || !(whole > 0)) return undefined;
  const percent = (value / whole) * 100;
  return { value: percent, text: `${percent.toFixed(1)} % (${raw} of ${groups[condition.percentOf]})` };
}

function predicateHolds(predicate: Predicate, item: Fact): boolean {
  switch (predicate.kind) {
    case 'all':
      return predicate.of.every((p) => predicateHolds(p, item));
    case 'any':
      return predicate.of.some((p) => predicateHolds(p, item));
    case 'not':
      return !predicateHolds(predicate.of, item);
    case 'field':
      return holds(fieldOf(item, predicate.field), predicate.test, item);
  }
}

const fieldOf = (item: Fact, field: string): FactValue | undefined => (field === 'id' ? item.id : item.fields[field]);

/** Every comparison holds. On a list, a comparison holds when it holds for some element (`ne`: for none equal). */
function holds(actual: unknown, test: Test, item?: Fact): boolean {
  return test.every((comparison) => {
    const values: unknown[] = Array.isArray(actual) ? actual : [actual];
    if (comparison.op === 'ne') return !values.some((value) => compare(value, { ...comparison, op: 'eq' }, item));
    return values.some((value) => compare(value, comparison, item));
  });
}

function compare(value: unknown, comparison: Comparison, item: Fact | undefined): boolean {
  const target = (v: unknown) => (typeof v === 'object' && v !== null && 'field' in v && item ? fieldOf(item, String(v.field)) : v);
  switch (comparison.op) {
    case 'eq':
    case 'ne':
      return same(value, target(comparison.value));
    case 'in':
      return comparison.values.some((v) => same(value, v));
    case 'matches':
      return (typeof value === 'string' || typeof value === 'number') && comparison.regex.test(String(value));
    case 'inCidr': {
      const ip = typeof value === 'string' ? value.replace(/[%/].*$/, '') : '';
      const family = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
      return family !== undefined && comparison.ranges.check(ip, family);
    }
    default: {
      const [a, b] = [numeric(value), numeric(target(comparison.value))];
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return comparison.op === 'gt' ? a > b : comparison.op === 'gte' ? a >= b : comparison.op === 'lt' ? a < b : a <= b;
    }
  }
}

/** Scalars compare as text (`8080` equals `"8080"`, as the device's own values are often strings). */
const same = (a: unknown, b: unknown) => ['string', 'number', 'boolean'].includes(typeof a) && String(a) === String(b);
const numeric = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : NaN);

/** The fields a predicate looks at (and those it compares with), to show them in the output. */
function fieldsOf(predicate: Predicate): string[] {
  if (predicate.kind === 'not') return fieldsOf(predicate.of);
  if (predicate.kind !== 'field') return [...new Set(predicate.of.flatMap(fieldsOf))];
  const refs = predicate.test.flatMap((c) => ('value' in c && typeof c.value === 'object' ? [c.value.field] : []));
  return [...new Set([predicate.field, ...refs])];
}

function describe(item: Fact, fields: readonly string[]): string {
  const shown = fields
    .filter((field) => field !== 'id' && field !== 'text')
    .map((field) => {
      const value = item.fields[field];
      return `${field} ${clip(Array.isArray(value) ? value.join(', ') : String(value), 60)}`;
    });
  return shown.length > 0 ? `${item.id} (${shown.join(', ')})` : item.id;
}
