import { escapeSegment, isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';
import type { OperationEntry } from '../src/lib/spec-catalog.ts';
import { bodyMedia, cloneParts, operationParameters, type RequestParts } from './request-parts.ts';
import type { LoadedSpec } from './spec-set.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

/** An invalid variant of a valid request; `pointer` says where (request body pointer, or the parameter). */
export type InvalidRequest = { name: string; pointer: string; parts: RequestParts };

const MAX_FIELDS = 4;
const UNEXPECTED = 'conformance_unexpected_field';
const WRONG_BY_TYPE: Record<string, unknown> = {
  string: 12345,
  integer: 'not-a-number',
  number: 'not-a-number',
  boolean: 'not-a-boolean',
  array: 'not-an-array',
  object: 'not-an-object',
};

/**
 * Requests the spec says are invalid, each built from a valid one by one change: a parameter that
 * breaks its schema, a required parameter left out, no body, a body that is not JSON, a required
 * field left out, a field the schema forbids, a wrong type, a value outside its enum. Every body
 * variant is checked against the schema first, so none is accidentally valid.
 */
export function invalidRequests(spec: LoadedSpec, op: OperationEntry, valid: RequestParts): InvalidRequest[] {
  return [...parameterVariants(spec, op, valid), ...bodyVariants(spec, op, valid), ...negotiationVariants(op, valid)];
}

/** Where the operation documents 406 or 415: an Accept it cannot answer, a body type it does not take. */
function negotiationVariants(op: OperationEntry, valid: RequestParts): InvalidRequest[] {
  const responses = (op.operation.responses ?? {}) as Json;
  const found: InvalidRequest[] = [];
  if ('406' in responses) {
    const parts = cloneParts(valid);
    parts.headers.accept = 'application/x-conformance-unknown';
    found.push({ name: 'Accept naming no format the operation offers', pointer: '', parts });
  }
  if ('415' in responses && valid.body) {
    const parts = cloneParts(valid);
    parts.headers['content-type'] = 'application/x-conformance-unknown';
    found.push({ name: 'body of a media type the operation does not take', pointer: '', parts });
  }
  return found;
}

function parameterVariants(spec: LoadedSpec, op: OperationEntry, valid: RequestParts): InvalidRequest[] {
  const found: InvalidRequest[] = [];
  for (const param of operationParameters(spec.document, op)) {
    const where = `${param.in} parameter ${param.name}`;
    if (param.required && param.in !== 'path') {
      const parts = cloneParts(valid);
      if (param.in === 'query') delete parts.query[param.name];
      else if (param.in === 'header') delete parts.headers[param.name.toLowerCase()];
      else delete parts.cookies[param.name];
      found.push({ name: `required ${where} left out`, pointer: '', parts });
    }
    if (param.in !== 'path' && param.in !== 'query') continue;
    const validate = spec.validator.at(param.schemaPointer);
    const schema = param.schema;
    const candidates: unknown[] = [
      ...(Array.isArray(schema.enum) ? ['not-an-allowed-value'] : []),
      ...(['integer', 'number', 'boolean'].includes(schema.type) ? ['not-a-number'] : []),
      'not valid!',
      ...(typeof schema.maxLength === 'number' ? ['x'.repeat(schema.maxLength + 1)] : []),
      '~',
    ];
    // Query values travel as text: a value is invalid when neither its text nor its typed form fits.
    const bad = candidates.find((c) => !validate(c));
    if (bad === undefined) continue;
    const parts = cloneParts(valid);
    if (param.in === 'path') parts.path[param.name] = bad;
    else parts.query[param.name] = bad;
    found.push({ name: `${where} '${short(bad)}' breaks its schema`, pointer: '', parts });
  }
  return found;
}

function bodyVariants(spec: LoadedSpec, op: OperationEntry, valid: RequestParts): InvalidRequest[] {
  const body = valid.body;
  if (!body || 'raw' in body) return [];
  const media = bodyMedia(spec.document, op).find((m) => m.mediaType === body.mediaType);
  if (!media) return [];
  const found: InvalidRequest[] = [];
  const withBody = (value: unknown): RequestParts => ({ ...cloneParts(valid), body: { mediaType: body.mediaType, value } });
  const isJson = /json/.test(body.mediaType);
  const isForm = body.mediaType === 'application/x-www-form-urlencoded';

  if (media.required) {
    const parts = cloneParts(valid);
    delete parts.body;
    found.push({ name: 'required body left out', pointer: '', parts });
  }
  if (isJson)
    found.push({
      name: 'body that is not JSON',
      pointer: '',
      parts: { ...cloneParts(valid), body: { mediaType: body.mediaType, raw: '{"unterminated' } },
    });
  if (!media.schema || !(isJson || isForm || body.mediaType === 'multipart/form-data')) return found;

  const validate = spec.validator.at(media.schemaPointer);
  const isInvalid = (value: unknown) => body.mediaType === 'multipart/form-data' || !validate(value);
  const push = (name: string, pointer: string, value: unknown) => {
    if (isInvalid(value)) found.push({ name, pointer, parts: withBody(value) });
  };
  const schema = merged(spec, media.schema);
  if (!isObject(body.value)) return found;
  const value = body.value;

  for (const field of ((schema.required ?? []) as string[]).filter((f) => f in value).slice(0, MAX_FIELDS)) {
    const { [field]: _left, ...rest } = value;
    push(`required field /${field} left out`, `/${escapeSegment(field)}`, rest);
  }
  if (schema.additionalProperties === false) {
    push(`field /${UNEXPECTED} the schema forbids`, `/${UNEXPECTED}`, { ...value, [UNEXPECTED]: isForm ? 'x' : true });
  }
  const properties = Object.entries((schema.properties ?? {}) as Json)
    .map(([name, raw]) => [name, resolveRef<Json>(spec.document, raw) ?? {}] as const)
    .sort(([a], [b]) => Number(b in value) - Number(a in value));
  let wrongTypes = 0;
  let badEnums = 0;
  for (const [name, prop] of properties) {
    const pointer = `/${escapeSegment(name)}`;
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    // Every form value is text and every multipart part is bytes: a wrong type cannot be sent in either.
    if (
      !isForm &&
      body.mediaType !== 'multipart/form-data' &&
      wrongTypes < MAX_FIELDS &&
      typeof type === 'string' &&
      type in WRONG_BY_TYPE
    ) {
      wrongTypes++;
      push(`wrong type at ${pointer} (${short(WRONG_BY_TYPE[type])} for ${type})`, pointer, { ...value, [name]: WRONG_BY_TYPE[type] });
    }
    if (Array.isArray(prop.enum) && badEnums < MAX_FIELDS) {
      badEnums++;
      push(`value outside the enum at ${pointer}`, pointer, { ...value, [name]: 'not-an-allowed-value' });
    }
  }
  return found;
}

/** A schema with its `$ref` followed and `allOf` members merged (properties, required). */
function merged(spec: LoadedSpec, raw: unknown): Json {
  const schema = resolveRef<Json>(spec.document, raw) ?? {};
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = schema.allOf.map((s: unknown) => merged(spec, s));
  return {
    ...schema,
    properties: Object.assign({}, ...parts.map((p: Json) => p.properties ?? {}), schema.properties ?? {}),
    required: [...new Set([...parts.flatMap((p: Json) => p.required ?? []), ...(schema.required ?? [])])],
    additionalProperties:
      schema.additionalProperties ?? parts.find((p: Json) => p.additionalProperties !== undefined)?.additionalProperties,
  };
}

const short = (v: unknown) => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 24 ? `${text.slice(0, 21)}...` : text;
};
