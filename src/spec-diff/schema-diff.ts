// Compares two versions of one (dereferenced) JSON Schema, in the direction it travels: what a request
// schema may no longer accept, or a response schema may newly send, breaks someone. `allOf` is merged
// first and `nullable: true` read as a `null` type, so refactorings that change no instance are silent.
import { isObject, toPointer } from '../lib/contract/json-pointer.ts';
import { ChangeLog, type Direction } from './change.ts';

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
const child = (location: string, ...segments: string[]) => location + toPointer(segments);

/** Compares `before` and `after` at `location`, adding every change to `log`. */
export function diffSchema(
  before: unknown,
  after: unknown,
  direction: Direction,
  location: string,
  log: ChangeLog,
  seen = new Set<unknown>(),
): void {
  if (!isObject(before) || !isObject(after) || seen.has(before)) return; // a recursive schema is compared once per path
  seen = new Set(seen).add(before);
  const old = flatten(before);
  const now = flatten(after);
  const side = direction === 'request' ? 'request' : 'response';

  const oldTypes = types(old);
  const newTypes = types(now);
  const nonNull = (s: Set<string>) =>
    [...s]
      .filter((t) => t !== 'null')
      .sort()
      .join('|');
  if (oldTypes.size > 0 && newTypes.size > 0 && nonNull(oldTypes) !== nonNull(newTypes)) {
    log.add('type-changed', true, location, `${side} type changed from ${nonNull(oldTypes) || 'null'} to ${nonNull(newTypes) || 'null'}`);
  }
  if (!oldTypes.has('null') && newTypes.has('null')) {
    log.add(
      'null-allowed',
      direction === 'response',
      location,
      direction === 'response' ? 'the response may now be null' : 'the request now accepts null',
    );
  } else if (oldTypes.has('null') && !newTypes.has('null') && newTypes.size > 0) {
    log.add(
      'null-refused',
      direction === 'request',
      location,
      direction === 'request' ? 'the request no longer accepts null' : 'the response is no longer null',
    );
  }
  if (old.format !== now.format && (old.format !== undefined || now.format !== undefined)) {
    const breaking = direction === 'request' ? now.format !== undefined : old.format !== undefined;
    log.add(
      'format-changed',
      breaking,
      location,
      `${side} format changed from ${String(old.format ?? 'none')} to ${String(now.format ?? 'none')}`,
    );
  }

  diffEnum(old, now, direction, location, log);
  diffBounds(old, now, direction, location, log);
  if (old.description !== now.description) log.add('description-changed', false, location, 'description changed');

  diffProperties(old, now, direction, location, log, seen);
  if (isObject(old.items) || isObject(now.items)) diffSchema(old.items, now.items, direction, child(location, 'items'), log, seen);
  diffAdditionalProperties(old, now, direction, location, log, seen);
  for (const keyword of VARIANTS) diffVariants(old, now, keyword, direction, location, log, seen);
}

function diffEnum(old: Schema, now: Schema, direction: Direction, location: string, log: ChangeLog): void {
  const oldValues = Array.isArray(old.enum) ? old.enum : 'const' in old ? [old.const] : undefined;
  const newValues = Array.isArray(now.enum) ? now.enum : 'const' in now ? [now.const] : undefined;
  const key = (v: unknown) => JSON.stringify(v);
  if (oldValues && newValues) {
    const removed = oldValues.filter((v) => !newValues.map(key).includes(key(v)));
    const added = newValues.filter((v) => !oldValues.map(key).includes(key(v)));
    if (removed.length > 0)
      log.add(
        'enum-narrowed',
        direction === 'request',
        location,
        `${direction === 'request' ? 'the request no longer accepts' : 'the response no longer sends'} ${show(removed)}`,
      );
    if (added.length > 0)
      log.add(
        'enum-widened',
        direction === 'response',
        location,
        `${direction === 'response' ? 'the response may now send' : 'the request now accepts'} ${show(added)}`,
      );
  } else if (!oldValues && newValues) {
    log.add('enum-narrowed', direction === 'request', location, `the ${direction} is now limited to ${show(newValues)}`);
  } else if (oldValues && !newValues) {
    log.add('enum-widened', direction === 'response', location, `the ${direction} is no longer limited to ${show(oldValues)}`);
  }
}

/**
 * maxLength/maximum/... lowered or added, minLength/minimum/... raised or added, or a pattern changed: fewer
 * values pass, which breaks requests. Looser bounds break nobody (the SDK types carry no bounds).
 */
function diffBounds(old: Schema, now: Schema, direction: Direction, location: string, log: ChangeLog): void {
  const report = (keyword: string, narrowed: boolean) => {
    const from = old[keyword] === undefined ? 'none' : JSON.stringify(old[keyword]);
    const to = now[keyword] === undefined ? 'none' : JSON.stringify(now[keyword]);
    if (narrowed)
      log.add(
        'constraint-narrowed',
        direction === 'request',
        location,
        `${keyword} changed from ${from} to ${to}: the ${direction} allows fewer values`,
      );
    else log.add('constraint-widened', false, location, `${keyword} changed from ${from} to ${to}: the ${direction} allows more values`);
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

function diffProperties(old: Schema, now: Schema, direction: Direction, location: string, log: ChangeLog, seen: Set<unknown>): void {
  const oldProps = isObject(old.properties) ? old.properties : {};
  const newProps = isObject(now.properties) ? now.properties : {};
  const oldRequired = new Set(Array.isArray(old.required) ? (old.required as string[]) : []);
  const newRequired = new Set(Array.isArray(now.required) ? (now.required as string[]) : []);
  for (const name of Object.keys(oldProps)) {
    const at = child(location, 'properties', name);
    if (!(name in newProps)) {
      log.add(
        'property-removed',
        true,
        at,
        direction === 'request' ? `request field ${name} removed: the server no longer accepts it` : `response field ${name} removed`,
      );
      continue;
    }
    if (!oldRequired.has(name) && newRequired.has(name)) {
      log.add('property-became-required', direction === 'request', at, `${direction} field ${name} became required`);
    } else if (oldRequired.has(name) && !newRequired.has(name)) {
      log.add('property-became-optional', direction === 'response', at, `${direction} field ${name} became optional`);
    }
    diffSchema(oldProps[name], newProps[name], direction, at, log, seen);
  }
  for (const name of Object.keys(newProps)) {
    if (name in oldProps) continue;
    const at = child(location, 'properties', name);
    const required = newRequired.has(name);
    log.add(
      'property-added',
      direction === 'request' && required,
      at,
      `${required ? 'required' : 'optional'} ${direction} field ${name} added`,
    );
  }
}

function diffAdditionalProperties(
  old: Schema,
  now: Schema,
  direction: Direction,
  location: string,
  log: ChangeLog,
  seen: Set<unknown>,
): void {
  const [a, b] = [old.additionalProperties, now.additionalProperties];
  const closed = (v: unknown) => v === false;
  if (!closed(a) && closed(b))
    log.add('additional-properties-refused', direction === 'request', location, `the ${direction} no longer allows other fields`);
  else if (closed(a) && !closed(b)) log.add('additional-properties-allowed', false, location, `the ${direction} now allows other fields`);
  else if (isObject(a) && isObject(b)) diffSchema(a, b, direction, child(location, 'additionalProperties'), log, seen);
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

/**
 * Pairs old variants with new ones whatever their order: identical variants first, then, among the rest,
 * repeatedly the pair whose comparison finds the fewest breaking changes, then the fewest changes, then the
 * nearest positions. A pairing whose pairs break nothing proves the union breaks nothing, so a reordering
 * (with or without compatible edits) reports no breaking change. Returns [old index, new index] pairs.
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
      diffSchema(a[i], b[j], direction, '', trial, seen);
      costs.push({ i, j, cost: [trial.changes.filter((c) => c.breaking).length, trial.changes.length, Math.abs(i - j)] });
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
  location: string,
  log: ChangeLog,
  seen: Set<unknown>,
): void {
  const a = Array.isArray(old[keyword]) ? (old[keyword] as unknown[]) : [];
  const b = Array.isArray(now[keyword]) ? (now[keyword] as unknown[]) : [];
  if (a.length === 0 || b.length === 0) return;
  const pairs = matchVariants(a, b, direction, seen).sort((x, y) => x[1] - y[1]);
  for (const [i, j] of pairs) diffSchema(a[i], b[j], direction, child(location, keyword, String(j)), log, seen);
  const matchedA = new Set(pairs.map(([i]) => i));
  const matchedB = new Set(pairs.map(([, j]) => j));
  for (const i of a.keys())
    if (!matchedA.has(i))
      log.add(
        'variant-removed',
        direction === 'request',
        child(location, keyword, String(i)),
        `${keyword} variant ${i} removed from the ${direction}`,
      );
  for (const j of b.keys())
    if (!matchedB.has(j))
      log.add(
        'variant-added',
        direction === 'response',
        child(location, keyword, String(j)),
        `${keyword} variant ${j} added to the ${direction}`,
      );
}
