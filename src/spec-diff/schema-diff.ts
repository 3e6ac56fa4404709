// Compares two versions of one (dereferenced) JSON Schema, in the direction it travels: what a request
// schema may no longer accept, or a response schema may newly send, breaks someone. `allOf` is merged
// first and `nullable: true` read as a `null` type, so refactorings that change no instance are silent.
// Each change is worded from its place (`request field "position.lat" type changed from number to string`).
import { isObject, toPointer } from '../lib/contract/json-pointer.ts';
import { CHECKS } from './checks.ts';
import { ChangeLog, describe, type Direction, type Place } from './change.ts';

type Schema = Record<string, unknown>;

const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;
const VARIANTS = ['oneOf', 'anyOf'] as const;

/** `allOf` merged into one schema (properties, required, the rest first come first kept); other schemas as they are. */
export function flatten(schema: unknown): Schema {
  if (!isObject(schema)) return {};
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...own } = schema;
  const merged: Schema = { ...own };
  const properties: Schema = { ...(isObject(own.properties) ? own.properties : {}) };
  const required = new Set<string>(Array.isArray(own.required) ? (own.required as string[]) : []);
  for (const part of allOf as unknown[]) {
    const flat = flatten(part);
    for (const [key, value] of Object.entries(flat)) {
      if (key === 'properties' && isObject(value)) Object.assign(properties, value);
      else if (key === 'required' && Array.isArray(value)) for (const r of value) required.add(String(r));
      else if (!(key in merged)) merged[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

/** The instance types a schema allows: `type` (string or array), `nullable`, and `const`/`enum` null. */
function types(schema: Schema): Set<string> {
  const declared = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  const set = new Set(declared);
  if (schema.nullable === true) set.add('null');
  if (set.has('integer') && set.has('number')) set.delete('integer');
  return set;
}

const show = (values: Iterable<unknown>) => [...values].map((v) => JSON.stringify(v)).join(', ');

/** The place one level down: `segment` is a field name, `[]` (an array item), `*` (a map value) or `oneOf[1]`. */
const child = (place: Place, pointerSegments: string[], segment: string): Place => ({
  pointer: place.pointer + toPointer(pointerSegments),
  subject: { ...place.subject, path: [...place.subject.path, segment] },
});

/**
 * Compares `before` and `after` at `place`, adding every change to `log`.
 * @example diffSchema({ type: 'string' }, { type: 'integer' }, 'request', place, log) // adds request-type-changed
 */
export function diffSchema(
  before: unknown,
  after: unknown,
  direction: Direction,
  place: Place,
  log: ChangeLog,
  seen = new Set<unknown>(),
): void {
  if (!isObject(before) || !isObject(after) || seen.has(before)) return; // a recursive schema is compared once per path
  seen = new Set(seen).add(before);
  const old = flatten(before);
  const now = flatten(after);
  const what = describe(place.subject);
  const at = place.pointer;
  const request = direction === 'request';

  const oldTypes = types(old);
  const newTypes = types(now);
  const nonNull = (s: Set<string>) =>
    [...s]
      .filter((t) => t !== 'null')
      .sort()
      .join('|');
  if (oldTypes.size > 0 && newTypes.size > 0 && nonNull(oldTypes) !== nonNull(newTypes)) {
    log.add(
      request ? 'request-type-changed' : 'response-type-changed',
      at,
      `${what} type changed from ${nonNull(oldTypes) || 'null'} to ${nonNull(newTypes) || 'null'}`,
    );
  }
  if (!oldTypes.has('null') && newTypes.has('null')) {
    if (request) log.add('request-null-allowed', at, `${what} now accepts null`);
    else log.add('response-null-allowed', at, `${what} may now be null`);
  } else if (oldTypes.has('null') && !newTypes.has('null') && newTypes.size > 0) {
    if (request) log.add('request-null-refused', at, `${what} no longer accepts null`);
    else log.add('response-null-refused', at, `${what} is no longer null`);
  }
  if (old.format !== now.format && (old.format !== undefined || now.format !== undefined)) {
    const id = request
      ? now.format === undefined
        ? 'request-format-removed'
        : 'request-format-changed'
      : old.format === undefined
        ? 'response-format-added'
        : 'response-format-changed';
    log.add(id, at, `${what} format changed from ${String(old.format ?? 'none')} to ${String(now.format ?? 'none')}`);
  }

  diffEnum(old, now, direction, place, log);
  diffBounds(old, now, direction, place, log);
  if (old.description !== now.description) log.add('schema-description-changed', at, `${what} description changed`);

  diffProperties(old, now, direction, place, log, seen);
  if (isObject(old.items) || isObject(now.items)) diffSchema(old.items, now.items, direction, child(place, ['items'], '[]'), log, seen);
  diffAdditionalProperties(old, now, direction, place, log, seen);
  for (const keyword of VARIANTS) diffVariants(old, now, keyword, direction, place, log, seen);
}

function diffEnum(old: Schema, now: Schema, direction: Direction, place: Place, log: ChangeLog): void {
  const oldValues = Array.isArray(old.enum) ? old.enum : 'const' in old ? [old.const] : undefined;
  const newValues = Array.isArray(now.enum) ? now.enum : 'const' in now ? [now.const] : undefined;
  const key = (v: unknown) => JSON.stringify(v);
  const what = describe(place.subject);
  const request = direction === 'request';
  if (oldValues && newValues) {
    const removed = oldValues.filter((v) => !newValues.map(key).includes(key(v)));
    const added = newValues.filter((v) => !oldValues.map(key).includes(key(v)));
    if (removed.length > 0) {
      if (request) log.add('request-enum-narrowed', place.pointer, `${what} no longer accepts ${show(removed)}`);
      else log.add('response-enum-narrowed', place.pointer, `${what} no longer sends ${show(removed)}`);
    }
    if (added.length > 0) {
      if (request) log.add('request-enum-widened', place.pointer, `${what} now accepts ${show(added)}`);
      else log.add('response-enum-widened', place.pointer, `${what} may now send ${show(added)}`);
    }
  } else if (!oldValues && newValues) {
    log.add(request ? 'request-enum-narrowed' : 'response-enum-narrowed', place.pointer, `${what} is now limited to ${show(newValues)}`);
  } else if (oldValues && !newValues) {
    log.add(
      request ? 'request-enum-widened' : 'response-enum-widened',
      place.pointer,
      `${what} is no longer limited to ${show(oldValues)}`,
    );
  }
}

/**
 * maxLength/maximum/... lowered or added, minLength/minimum/... raised or added, or a pattern changed: fewer
 * values pass, which breaks requests. Looser request bounds break nobody (the SDK types carry no bounds);
 * looser response bounds may break a client that relied on them (a warning).
 */
function diffBounds(old: Schema, now: Schema, direction: Direction, place: Place, log: ChangeLog): void {
  const what = describe(place.subject);
  const report = (keyword: string, narrowed: boolean) => {
    const from = old[keyword] === undefined ? 'none' : JSON.stringify(old[keyword]);
    const to = now[keyword] === undefined ? 'none' : JSON.stringify(now[keyword]);
    const id = narrowed
      ? direction === 'request'
        ? 'request-constraint-narrowed'
        : 'response-constraint-narrowed'
      : direction === 'request'
        ? 'request-constraint-widened'
        : 'response-constraint-widened';
    log.add(id, place.pointer, `${what} ${keyword} changed from ${from} to ${to} (${narrowed ? 'fewer' : 'more'} values allowed)`);
  };
  for (const keyword of UPPER_BOUNDS) {
    const [a, b] = [old[keyword], now[keyword]];
    if (a === b || (typeof a !== 'number' && typeof b !== 'number')) continue;
    report(keyword, typeof b === 'number' && (typeof a !== 'number' || b < a));
  }
  for (const keyword of LOWER_BOUNDS) {
    const [a, b] = [old[keyword], now[keyword]];
    if (a === b || (typeof a !== 'number' && typeof b !== 'number')) continue;
    report(keyword, typeof b === 'number' && (typeof a !== 'number' || b > a));
  }
  if (old.pattern !== now.pattern) report('pattern', now.pattern !== undefined); // a changed pattern may refuse what the old accepted
}

function diffProperties(old: Schema, now: Schema, direction: Direction, place: Place, log: ChangeLog, seen: Set<unknown>): void {
  const oldProps = isObject(old.properties) ? old.properties : {};
  const newProps = isObject(now.properties) ? now.properties : {};
  const oldRequired = new Set(Array.isArray(old.required) ? (old.required as string[]) : []);
  const newRequired = new Set(Array.isArray(now.required) ? (now.required as string[]) : []);
  const request = direction === 'request';
  for (const name of Object.keys(oldProps)) {
    const field = child(place, ['properties', name], name);
    const what = describe(field.subject);
    if (!(name in newProps)) {
      if (request) log.add('request-field-removed', field.pointer, `${what} removed (the server no longer accepts it)`);
      else log.add('response-field-removed', field.pointer, `${what} removed`);
      continue;
    }
    if (!oldRequired.has(name) && newRequired.has(name)) {
      log.add(request ? 'request-field-became-required' : 'response-field-became-required', field.pointer, `${what} became required`);
    } else if (oldRequired.has(name) && !newRequired.has(name)) {
      log.add(request ? 'request-field-became-optional' : 'response-field-became-optional', field.pointer, `${what} became optional`);
    }
    diffSchema(oldProps[name], newProps[name], direction, field, log, seen);
  }
  for (const name of Object.keys(newProps)) {
    if (name in oldProps) continue;
    const field = child(place, ['properties', name], name);
    const what = describe(field.subject);
    if (!request) log.add('response-field-added', field.pointer, `${what} added`);
    else if (newRequired.has(name)) log.add('required-request-field-added', field.pointer, `required ${what} added`);
    else log.add('optional-request-field-added', field.pointer, `optional ${what} added`);
  }
}

function diffAdditionalProperties(old: Schema, now: Schema, direction: Direction, place: Place, log: ChangeLog, seen: Set<unknown>): void {
  const [a, b] = [old.additionalProperties, now.additionalProperties];
  const closed = (v: unknown) => v === false;
  const what = describe(place.subject);
  if (!closed(a) && closed(b))
    log.add(`${direction}-additional-fields-refused`, place.pointer, `${what} no longer allows fields it does not list`);
  else if (closed(a) && !closed(b))
    log.add(`${direction}-additional-fields-allowed`, place.pointer, `${what} now allows fields it does not list`);
  else if (isObject(a) && isObject(b)) diffSchema(a, b, direction, child(place, ['additionalProperties'], '*'), log, seen);
}

/** A schema as canonical text (keys sorted; a cycle back to an enclosing schema written by its depth): equal text, same schema. */
function canonical(value: unknown, stack: unknown[] = []): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'undefined';
  const up = stack.indexOf(value);
  if (up >= 0) return `{"$cycle":${stack.length - up}}`;
  const inner = [...stack, value];
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, inner)).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Schema)[k], inner)}`)
    .join(',')}}`;
}

const TRIAL_PLACE: Place = { pointer: '', subject: { root: 'value', field: 'field', path: [] } };

/**
 * Pairs old variants with new ones whatever their order: identical variants first, then, among the rest,
 * repeatedly the pair whose comparison finds the fewest breaking changes (by default severity), then the
 * fewest changes, then the nearest positions. A pairing whose pairs break nothing proves the union breaks
 * nothing, so a reordering (with or without compatible edits) reports no breaking change. Returns
 * [old index, new index] pairs.
 */
function matchVariants(a: unknown[], b: unknown[], direction: Direction, seen: Set<unknown>): [number, number][] {
  const pairs: [number, number][] = [];
  const freeA = new Set(a.keys());
  const freeB = new Set(b.keys());
  const keysB = b.map((v) => canonical(v));
  for (const i of freeA) {
    const key = canonical(a[i]);
    const j = [...freeB].find((k) => keysB[k] === key);
    if (j === undefined) continue;
    pairs.push([i, j]);
    freeA.delete(i);
    freeB.delete(j);
  }
  const costs: { i: number; j: number; cost: [number, number, number] }[] = [];
  for (const i of freeA) {
    for (const j of freeB) {
      const trial = new ChangeLog();
      diffSchema(a[i], b[j], direction, TRIAL_PLACE, trial, seen);
      const breaking = trial.changes.filter((c) => CHECKS[c.id].severity === 'breaking').length;
      costs.push({ i, j, cost: [breaking, trial.changes.length, Math.abs(i - j)] });
    }
  }
  costs.sort((x, y) => x.cost[0] - y.cost[0] || x.cost[1] - y.cost[1] || x.cost[2] - y.cost[2] || x.i - y.i);
  for (const { i, j } of costs) {
    if (!freeA.has(i) || !freeB.has(j)) continue;
    pairs.push([i, j]);
    freeA.delete(i);
    freeB.delete(j);
  }
  return pairs;
}

/**
 * oneOf/anyOf variants, matched order-independently (matchVariants): an unmatched old variant refuses
 * requests, an unmatched new one surprises clients. A keyword on one side only is not judged here (its
 * effect depends on the variants; type and enum still are).
 */
function diffVariants(
  old: Schema,
  now: Schema,
  keyword: (typeof VARIANTS)[number],
  direction: Direction,
  place: Place,
  log: ChangeLog,
  seen: Set<unknown>,
): void {
  const a = Array.isArray(old[keyword]) ? (old[keyword] as unknown[]) : [];
  const b = Array.isArray(now[keyword]) ? (now[keyword] as unknown[]) : [];
  if (a.length === 0 || b.length === 0) return;
  const pairs = matchVariants(a, b, direction, seen).sort((x, y) => x[1] - y[1]);
  for (const [i, j] of pairs) diffSchema(a[i], b[j], direction, child(place, [keyword, String(j)], `${keyword}[${j}]`), log, seen);
  const matchedA = new Set(pairs.map(([i]) => i));
  const matchedB = new Set(pairs.map(([, j]) => j));
  const what = describe(place.subject);
  for (const i of a.keys())
    if (!matchedA.has(i))
      log.add(`${direction}-variant-removed`, place.pointer + toPointer([keyword, String(i)]), `${what} ${keyword} variant ${i} removed`);
  for (const j of b.keys())
    if (!matchedB.has(j))
      log.add(`${direction}-variant-added`, place.pointer + toPointer([keyword, String(j)]), `${what} ${keyword} variant ${j} added`);
}
