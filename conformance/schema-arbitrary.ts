import fc from 'fast-check';
import { isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;
type Arbitrary = fc.Arbitrary<unknown>;

const MAX_DEPTH = 6;

/**
 * A fast-check arbitrary of the values a JSON schema (OpenAPI 3.1) accepts, for the subset the specs
 * use: $ref, const, enum, allOf (objects merged), oneOf/anyOf, type lists, strings (formats,
 * patterns, lengths), numbers (bounds), arrays, objects (required, optional, maps). Sizes are kept
 * small: fuzzing looks for answers outside the contract, not for load.
 */
export function schemaArbitrary(doc: unknown, raw: unknown, depth = 0): Arbitrary {
  const schema = resolveRef<Json>(doc, raw);
  if (!isObject(schema) || depth > MAX_DEPTH) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.allOf)) return schemaArbitrary(doc, mergeAllOf(doc, schema), depth + 1);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key]) && schema[key].length > 0)
      return fc.oneof(...(schema[key] as unknown[]).map((s) => schemaArbitrary(doc, s, depth + 1)));
  }
  if (Array.isArray(schema.type))
    return fc.oneof(...(schema.type as string[]).map((type) => schemaArbitrary(doc, { ...schema, type }, depth + 1)));
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: bound(schema.minimum, -1_000_000), max: bound(schema.maximum, 1_000_000) });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: bound(schema.minimum, -1e6), max: bound(schema.maximum, 1e6) });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = bound(schema.minItems, 0);
      return fc.array(schemaArbitrary(doc, schema.items ?? {}, depth + 1), {
        minLength,
        maxLength: Math.min(bound(schema.maxItems, 3), Math.max(minLength, 3)),
      });
    }
    case 'object':
      return objectArbitrary(doc, schema, depth);
    default:
      return schema.properties ? objectArbitrary(doc, schema, depth) : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArbitrary(doc: unknown, schema: Json, depth: number): Arbitrary {
  const properties = (schema.properties ?? {}) as Json;
  const required = new Set<string>((schema.required ?? []) as string[]);
  const fixed = fc.record(Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, schemaArbitrary(doc, s, depth + 1)])), {
    requiredKeys: Object.keys(properties).filter((name) => required.has(name)),
  });
  if (!isObject(schema.additionalProperties)) return fixed.map((v) => ({ ...(v as Json) }));
  const key =
    isObject(schema.propertyNames) && typeof schema.propertyNames.pattern === 'string'
      ? safeStringMatching(schema.propertyNames.pattern, 64)
      : fc.string({ minLength: 1, maxLength: 16 });
  const extra = fc.dictionary(key, schemaArbitrary(doc, schema.additionalProperties, depth + 1), { maxKeys: 3 });
  return fc.tuple(fixed, extra).map(([a, b]) => ({ ...(b as Json), ...(a as Json) }));
}

function stringArbitrary(schema: Json): Arbitrary {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
  switch (schema.format) {
    case 'date':
      return fc
        .date({ min: new Date('1700-01-01'), max: new Date('2100-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl();
    case 'email':
      return fc.emailAddress();
    default:
  }
  if (typeof schema.pattern === 'string') return safeStringMatching(schema.pattern, schema.maxLength).filter(fits);
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

/** fast-check's regex strings where it knows the syntax; plain strings otherwise. */
function safeStringMatching(pattern: string, maxLength: number | undefined): fc.Arbitrary<string> {
  try {
    const arb = fc.stringMatching(new RegExp(pattern));
    return maxLength === undefined ? arb : arb.filter((s) => s.length <= maxLength);
  } catch {
    return fc.string({ minLength: 1, maxLength: 16 });
  }
}

function mergeAllOf(doc: unknown, schema: Json): Json {
  const parts = (schema.allOf as unknown[]).map((s) => resolveRef<Json>(doc, s) ?? {});
  const { allOf: _allOf, ...rest } = schema;
  return {
    type: 'object',
    ...rest,
    properties: Object.assign({}, ...parts.map((p) => p.properties ?? {}), rest.properties ?? {}),
    required: [...new Set([...parts.flatMap((p) => (p.required ?? []) as string[]), ...((rest.required ?? []) as string[])])],
  };
}

const bound = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
