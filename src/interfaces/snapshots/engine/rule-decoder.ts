import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { COLLECTIONS, collectionFields, isCollection, type CollectionName } from './facts.ts';
import { compileGlob, type Glob } from './glob.ts';
import { VERSION_FORM } from './manifest.ts';
import type { Comparison, Condition, FieldRef, Predicate, Scalar, Test } from './rule-types.ts';
import { compileRegex } from '../../../lib/safe-regex.ts';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isScalar = (value: unknown): value is Scalar => ['string', 'number', 'boolean'].includes(typeof value);
const list = (items: readonly string[]) => items.join(', ');

export const CONDITION_KINDS = ['all', 'any', 'not', 'version', 'pattern', 'present', 'missing', 'json', 'extract', 'each'] as const;
export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'matches', 'inCidr'] as const;
const NAMED_GROUP = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Decodes the `match` part of rules into compiled conditions, collecting every problem with where it
 * is (`rules[3] (name).match.all[1].pattern.regex: ...`) instead of stopping at the first, and the
 * files the conditions read.
 */
export class RuleDecoder {
  readonly problems: string[] = [];
  readonly reads: Glob[] = [];

  problem(at: string, message: string): undefined {
    this.problems.push(`${at}: ${message}`);
    return undefined;
  }

  /** An object with only `allowed` keys and all `required` ones. */
  record(value: unknown, at: string, allowed: readonly string[], required: readonly string[] = []): Json | undefined {
    if (!isRecord(value)) return this.problem(at, 'must be an object');
    const unknown = Object.keys(value).find((key) => !allowed.includes(key));
    if (unknown !== undefined) return this.problem(at, `unknown key ${JSON.stringify(unknown)} (allowed: ${list(allowed)})`);
    const missing = required.find((key) => value[key] === undefined);
    return missing === undefined ? value : this.problem(at, `${JSON.stringify(missing)} is required`);
  }

  text(value: unknown, at: string, max: number): string | undefined {
    return typeof value === 'string' && value.trim() !== '' && value.length <= max
      ? value
      : this.problem(at, `must be a non-empty string of at most ${max} characters`);
  }

  count(value: unknown, at: string): number | undefined {
    if (value === undefined) return 1;
    return Number.isSafeInteger(value) && (value as number) >= 1
      ? (value as number)
      : this.problem(at, 'must be a whole number of at least 1');
  }

  glob(value: unknown, at: string, reads: boolean): Glob | undefined {
    const glob = typeof value === 'string' ? compileGlob(value) : 'must be a string';
    if (typeof glob === 'string') return this.problem(at, glob);
    if (reads) this.reads.push(glob);
    return glob;
  }

  regex(value: unknown, flags: unknown, at: string): RegExp | undefined {
    if (typeof value !== 'string') return this.problem(at, 'must be a string');
    const regex = compileRegex(value, flags === undefined ? '' : String(flags));
    return typeof regex === 'string' ? this.problem(at, `${JSON.stringify(value.slice(0, 60))} ${regex}`) : regex;
  }

  condition(value: unknown, at: string): Condition | undefined {
    const body = this.record(value, at, CONDITION_KINDS);
    if (!body) return undefined;
    const kinds = Object.keys(body) as (typeof CONDITION_KINDS)[number][];
    if (kinds.length !== 1) return this.problem(at, `must have exactly one of ${list(CONDITION_KINDS)}`);
    const kind = kinds[0]!;
    const inner = body[kind];
    const here = `${at}.${kind}`;
    switch (kind) {
      case 'all':
      case 'any': {
        if (!Array.isArray(inner) || inner.length === 0) return this.problem(here, 'must be a non-empty list of conditions');
        const of = inner.map((item, i) => this.condition(item, `${here}[${i}]`));
        return of.every((c) => c !== undefined) ? { kind, of: of as Condition[] } : undefined;
      }
      case 'not': {
        const of = this.condition(inner, here);
        return of && { kind, of };
      }
      case 'version': {
        const range = this.record(inner, here, ['from', 'before']);
        if (!range) return undefined;
        if (range.from === undefined && range.before === undefined) return this.problem(here, 'needs "from", "before" or both');
        const bound = (key: 'from' | 'before') => {
          const given = range[key];
          if (given === undefined) return undefined;
          return typeof given === 'string' && VERSION_FORM.test(given)
            ? given.split('.').map(Number)
            : this.problem(`${here}.${key}`, 'must be a version like 16.1.0');
        };
        const from = bound('from');
        const before = bound('before');
        if ((range.from !== undefined && !from) || (range.before !== undefined && !before)) return undefined;
        const text = [range.from && `from ${range.from}`, range.before && `before ${range.before}`].filter(Boolean).join(' and ');
        return { kind, text, ...(from ? { from } : {}), ...(before ? { before } : {}) };
      }
      case 'pattern': {
        const p = this.record(inner, here, ['files', 'regex', 'flags', 'atLeast'], ['files', 'regex']);
        if (!p) return undefined;
        const files = this.glob(p.files, `${here}.files`, true);
        const regex = this.regex(p.regex, p.flags, `${here}.regex`);
        const atLeast = this.count(p.atLeast, `${here}.atLeast`);
        return files && regex && atLeast ? { kind, files, regex, atLeast } : undefined;
      }
      case 'present':
      case 'missing': {
        const files = this.glob(inner, here, false);
        return files && { kind, files };
      }
      case 'json': {
        const j = this.record(inner, here, ['file', 'key', ...OPERATORS], ['file', 'key']);
        if (!j) return undefined;
        const file =
          typeof j.file === 'string' && !j.file.includes('*')
            ? this.glob(j.file, `${here}.file`, true)
            : this.problem(`${here}.file`, 'must be a file path without wildcards');
        const key =
          Array.isArray(j.key) && j.key.length > 0 && j.key.every((k) => typeof k === 'string')
            ? (j.key as string[])
            : this.problem(`${here}.key`, 'must be a non-empty list of property names');
        const test = this.test(j, here, undefined);
        return file && key && test ? { kind, file: file.source, key, test } : undefined;
      }
      case 'extract':
        return this.extract(inner, here);
      case 'each': {
        const e = this.record(inner, here, ['in', 'where', 'atLeast'], ['in']);
        if (!e) return undefined;
        if (typeof e.in !== 'string' || !isCollection(e.in))
          return this.problem(`${here}.in`, `must be one of ${list(Object.keys(COLLECTIONS))}`);
        const collection = e.in;
        const source: string | undefined = COLLECTIONS[collection].source;
        if (source !== undefined) this.glob(source, `${here}.in`, true);
        const where = e.where === undefined ? undefined : this.predicate(e.where, `${here}.where`, collection);
        const atLeast = this.count(e.atLeast, `${here}.atLeast`);
        if ((e.where !== undefined && !where) || !atLeast) return undefined;
        return { kind, collection, atLeast, ...(where ? { where } : {}) };
      }
    }
  }

  private extract(inner: unknown, at: string): Condition | undefined {
    const x = this.record(
      inner,
      at,
      ['files', 'regex', 'flags', 'value', 'percentOf', 'label', 'as', ...OPERATORS],
      ['files', 'regex', 'value'],
    );
    if (!x) return undefined;
    const files = this.glob(x.files, `${at}.files`, true);
    const regex = this.regex(x.regex, x.flags, `${at}.regex`);
    const as = x.as ?? 'number';
    if (as !== 'number' && as !== 'days-after-snapshot') return this.problem(`${at}.as`, 'must be "number" or "days-after-snapshot"');
    const test = this.test(x, at, undefined);
    if (!files || !regex || !test) return undefined;
    // Every named group a condition uses must exist: `(?:re)|` matches the empty string, so exec lists all groups.
    const groups = Object.keys(new RegExp(`(?:${regex.source})|`).exec('')?.groups ?? {});
    const group = (key: string) => {
      const name = x[key];
      if (name === undefined) return true;
      return typeof name === 'string' && NAMED_GROUP.test(name) && groups.includes(name)
        ? name
        : this.problem(`${at}.${key}`, `must name a group of the regex (${list(groups) || 'it has none'})`);
    };
    const [value, percentOf, label] = [group('value'), group('percentOf'), group('label')];
    if (typeof value !== 'string' || !percentOf || !label) return undefined;
    return {
      kind: 'extract',
      files,
      regex,
      value,
      as,
      test,
      ...(typeof percentOf === 'string' ? { percentOf } : {}),
      ...(typeof label === 'string' ? { label } : {}),
    };
  }

  private predicate(value: unknown, at: string, collection: CollectionName): Predicate | undefined {
    if (isRecord(value) && 'field' in value) {
      const p = this.record(value, at, ['field', ...OPERATORS], ['field']);
      if (!p) return undefined;
      const fields = collectionFields(collection);
      if (typeof p.field !== 'string' || !fields.includes(p.field))
        return this.problem(`${at}.field`, `must be a field of ${collection} (${list(fields)})`);
      const test = this.test(p, at, fields);
      return test && { kind: 'field', field: p.field, test };
    }
    const body = this.record(value, at, ['all', 'any', 'not']);
    if (!body) return undefined;
    const kinds = Object.keys(body) as ('all' | 'any' | 'not')[];
    if (kinds.length !== 1) return this.problem(at, 'must be a field test ("field" and comparisons) or exactly one of all, any, not');
    const kind = kinds[0]!;
    if (kind === 'not') {
      const of = this.predicate(body.not, `${at}.not`, collection);
      return of && { kind, of };
    }
    const items = body[kind];
    if (!Array.isArray(items) || items.length === 0) return this.problem(`${at}.${kind}`, 'must be a non-empty list');
    const of = items.map((item, i) => this.predicate(item, `${at}.${kind}[${i}]`, collection));
    return of.every((p) => p !== undefined) ? { kind, of: of as Predicate[] } : undefined;
  }

  /** The comparisons among `body`'s keys; `fields` (inside `each`) allows `{"field": name}` as a value. */
  private test(body: Json, at: string, fields: readonly string[] | undefined): Test | undefined {
    const comparisons: Comparison[] = [];
    const before = this.problems.length;
    for (const op of OPERATORS) {
      const value = body[op];
      const here = `${at}.${op}`;
      if (value === undefined) continue;
      if (op === 'in') {
        if (Array.isArray(value) && value.length > 0 && value.every(isScalar)) comparisons.push({ op, values: value });
        else this.problem(here, 'must be a non-empty list of strings, numbers or booleans');
      } else if (op === 'matches') {
        const regex = this.regex(value, undefined, here);
        if (regex) comparisons.push({ op, regex });
      } else if (op === 'inCidr') {
        const ranges = this.cidrs(value, here);
        if (ranges) comparisons.push({ op, ranges, text: (value as string[]).join(', ') });
      } else if (isRecord(value)) {
        const field = this.fieldRef(value, here, fields);
        if (field) comparisons.push({ op, value: field });
      } else if (op === 'eq' || op === 'ne') {
        if (isScalar(value)) comparisons.push({ op, value });
        else this.problem(here, 'must be a string, number or boolean');
      } else if (typeof value === 'number' && Number.isFinite(value)) comparisons.push({ op, value });
      else this.problem(here, 'must be a number');
    }
    if (this.problems.length > before) return undefined;
    return comparisons.length > 0 ? comparisons : this.problem(at, `needs at least one comparison (${list(OPERATORS)})`);
  }

  private fieldRef(value: Json, at: string, fields: readonly string[] | undefined): FieldRef | undefined {
    if (!fields) return this.problem(at, 'can name another field only inside "each"');
    const ref = this.record(value, at, ['field'], ['field']);
    if (!ref) return undefined;
    return typeof ref.field === 'string' && fields.includes(ref.field)
      ? { field: ref.field }
      : this.problem(`${at}.field`, `must be one of ${list(fields)}`);
  }

  private cidrs(value: unknown, at: string): BlockList | undefined {
    if (!Array.isArray(value) || value.length === 0)
      return this.problem(at, 'must be a non-empty list of address ranges like 192.0.2.0/24');
    const ranges = new BlockList();
    for (const item of value) {
      const [address = '', prefix = '', extra] = typeof item === 'string' ? item.split('/') : [];
      const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
      const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
      if (!family || extra !== undefined || !(bits <= (family === 'ipv4' ? 32 : 128)))
        return this.problem(at, `${JSON.stringify(item)} is not an address range like 192.0.2.0/24`);
      ranges.addSubnet(address, bits, family);
    }
    return ranges;
  }
}
