import { isDeepStrictEqual } from 'node:util';
import { getAtPointer, isObject } from '../src/lib/contract/json-pointer.ts';
import type { HttpResponse } from './http.ts';
import { SetupError } from './interpolate.ts';

/** Resolves `$example: "<operationId> <status|request> <name> [pointer]"` to the spec's example value. */
export type ExampleLookup = (reference: string) => unknown;

export type Mismatch = { pointer: string; message: string };

const TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null'];

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Whether a value meets a matcher: a literal (deep equality), or an object with one `$` key:
 * `$type`, `$matches` (regex), `$present`, `$absent`, `$between: [min, max]`, `$example`.
 * Returns the reason it does not, or undefined.
 */
export function mismatch(actual: unknown, matcher: unknown, examples: ExampleLookup): string | undefined {
  if (isObject(matcher)) {
    const keys = Object.keys(matcher);
    if (keys.length === 1 && keys[0]!.startsWith('$')) return special(actual, keys[0]!, matcher[keys[0]!], examples);
  }
  if (isDeepStrictEqual(actual, matcher)) return undefined;
  return `expected ${show(matcher)}, got ${show(actual)}`;
}

function special(actual: unknown, key: string, arg: unknown, examples: ExampleLookup): string | undefined {
  switch (key) {
    case '$present':
      return (actual !== undefined) === (arg !== false)
        ? undefined
        : arg === false
          ? `expected absent, got ${show(actual)}`
          : 'expected present, it is absent';
    case '$absent':
      return (actual === undefined) === (arg !== false) ? undefined : `expected absent, got ${show(actual)}`;
    case '$type': {
      if (!TYPES.includes(String(arg))) throw new SetupError(`$type ${show(arg)} is not one of ${TYPES.join(', ')}`);
      const type = typeOf(actual);
      const ok = type === arg || (arg === 'integer' && Number.isInteger(actual)) || (arg === 'number' && type === 'number');
      return ok ? undefined : `expected a ${arg}, got ${actual === undefined ? 'nothing' : show(actual)}`;
    }
    case '$matches':
      if (typeof actual !== 'string') return `expected text matching /${arg}/, got ${actual === undefined ? 'nothing' : show(actual)}`;
      return new RegExp(String(arg)).test(actual) ? undefined : `expected text matching /${arg}/, got ${show(actual)}`;
    case '$between': {
      if (!Array.isArray(arg) || arg.length !== 2) throw new SetupError('$between takes [min, max]');
      const n = typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : actual;
      const [min, max] = arg.map(Number) as [number, number];
      return typeof n === 'number' && n >= min && n <= max
        ? undefined
        : `expected a number from ${min} to ${max}, got ${actual === undefined ? 'nothing' : show(actual)}`;
    }
    case '$example':
      return mismatch(actual, examples(String(arg)), examples);
    default:
      throw new SetupError(`unknown matcher ${key}`);
  }
}

/** Every expectation of a step on one answer: status, headers (case-insensitive), body pointers. */
export function checkExpectations(
  res: HttpResponse,
  expect: { status?: number | number[]; headers?: Record<string, unknown>; body?: Record<string, unknown> },
  examples: ExampleLookup,
): Mismatch[] {
  const found: Mismatch[] = [];
  if (expect.status !== undefined) {
    const allowed = Array.isArray(expect.status) ? expect.status : [expect.status];
    if (!allowed.includes(res.status)) found.push({ pointer: '', message: `expected status ${allowed.join(' or ')}, got ${res.status}` });
  }
  for (const [name, matcher] of Object.entries(expect.headers ?? {})) {
    const raw = res.headers[name.toLowerCase()];
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    // Header values are text: a literal number in the scenario is compared as text.
    const wanted = typeof matcher === 'number' || typeof matcher === 'boolean' ? String(matcher) : matcher;
    const problem = mismatch(value, wanted, examples);
    if (problem) found.push({ pointer: '', message: `header ${name}: ${hidden(name, problem)}` });
  }
  for (const [pointer, matcher] of Object.entries(expect.body ?? {})) {
    const problem = mismatch(getAtPointer(res.body, pointer), matcher, examples);
    if (problem) found.push({ pointer, message: hidden(pointer, problem) });
  }
  return found;
}

/** A value that may be a credential (a client secret, a session cookie) is never shown in a report. */
const hidden = (where: string, problem: string) =>
  SECRET.test(where) ? problem.replace(/, got .*$/s, ', got a value (not shown: it may be a credential)') : problem;
const SECRET = /secret|password|passwd|token|cookie|authorization/i;

/** A value for messages, cut short; never the whole of a large body. */
function show(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
