import { escapeSegment, isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';
import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

/** The schema of a response body for a status and media type, if the operation declares one. */
export function responseSchema(doc: OpenApiDocument, op: OperationEntry, status: number, contentType: string): Json | undefined {
  const responses = (op.operation.responses ?? {}) as Json;
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
  if (!key) return undefined;
  const content = (resolveRef<Json>(doc, responses[key])?.content ?? {}) as Json;
  const media = content[contentType] ?? Object.values(content)[0];
  return media ? resolveRef<Json>(doc, media.schema) : undefined;
}

/**
 * The shape of a body: a sorted list of `pointer:type`, arrays as `*` and the keys of maps (objects
 * whose schema takes any property name) as `*`, so two targets with different data but the same
 * structure have the same shape.
 *
 * @example
 * bodyShape(doc, chartListSchema, { status: 'success', data: { c1: { name: 'x' } } });
 * // [':object', '/data:object', '/data/*:object', '/data/* /name:string', '/status:string']
 */
export function bodyShape(doc: OpenApiDocument, schema: Json | undefined, value: unknown): string[] {
  if (value === undefined) return [];
  const out = new Set<string>();
  walk(doc, schema, value, '', out, 0);
  return [...out].sort();
}

function walk(doc: OpenApiDocument, rawSchema: unknown, value: unknown, pointer: string, out: Set<string>, depth: number) {
  const schema = merged(doc, rawSchema);
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  out.add(`${pointer}:${type}`);
  if (depth > 20) return;
  if (Array.isArray(value)) {
    for (const item of value) walk(doc, schema.items, item, `${pointer}/*`, out, depth + 1);
  } else if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Json;
    const isMap = isObject(schema.additionalProperties) || isObject(schema.patternProperties);
    for (const [key, child] of Object.entries(value)) {
      const known = key in properties;
      const segment = known || !isMap ? escapeSegment(key) : '*';
      walk(doc, known ? properties[key] : schema.additionalProperties, child, `${pointer}/${segment}`, out, depth + 1);
    }
  }
}

/** A schema with its `$ref` followed and its `allOf` members' properties merged in. */
function merged(doc: OpenApiDocument, raw: unknown): Json {
  const schema = resolveRef<Json>(doc, raw) ?? {};
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = schema.allOf.map((s: unknown) => merged(doc, s));
  return {
    ...schema,
    properties: Object.assign({}, ...parts.map((p: Json) => p.properties ?? {}), schema.properties ?? {}),
    additionalProperties:
      schema.additionalProperties ?? parts.find((p: Json) => p.additionalProperties !== undefined)?.additionalProperties,
  };
}
