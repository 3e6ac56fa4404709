import { encodeBody, exampleValue } from '../src/lib/contract/example-request.ts';
import { escapeSegment, isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';
import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';
import type { HttpRequest } from './http.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

/** A request as parts, before encoding: probes and fuzzing change parts, then render them. */
export type RequestParts = {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  cookies: Record<string, string>;
  body?: { mediaType: string; value: unknown } | { mediaType: string; raw: Uint8Array | string };
};

/** A parameter of an operation with the JSON pointer of its schema (for validation). */
export type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Json;
  schemaPointer: string;
  holder: Json;
};

/** A request body media type of an operation with the pointer of its schema. */
export type BodyMedia = { mediaType: string; required: boolean; schema: Json | undefined; schemaPointer: string; media: Json };

const opPointer = (op: OperationEntry) => `/paths/${escapeSegment(op.path)}/${op.method}`;

/** Path-level and operation-level parameters (the operation's win), resolved, with their schema pointers. */
export function operationParameters(doc: OpenApiDocument, op: OperationEntry): Parameter[] {
  const collect = (list: unknown, base: string) =>
    ((Array.isArray(list) ? list : []) as unknown[])
      .map((raw, i): Parameter | undefined => {
        const holder = resolveRef<Json>(doc, raw);
        if (!holder) return undefined;
        const ref = isObject(raw) && typeof raw.$ref === 'string' ? raw.$ref.slice(1) : `${base}/parameters/${i}`;
        return {
          name: holder.name,
          in: holder.in,
          required: !!holder.required,
          schema: resolveRef<Json>(doc, holder.schema) ?? {},
          schemaPointer: `${ref}/schema`,
          holder,
        };
      })
      .filter((p): p is Parameter => !!p);
  const own = collect(op.operation.parameters, opPointer(op));
  const shared = collect((doc.paths[op.path] as Json).parameters, `/paths/${escapeSegment(op.path)}`);
  return [...own, ...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in))];
}

/** The request body media types of an operation, in spec order. */
export function bodyMedia(doc: OpenApiDocument, op: OperationEntry): BodyMedia[] {
  const raw = op.operation.requestBody;
  const requestBody = resolveRef<Json>(doc, raw);
  if (!requestBody?.content) return [];
  const base = isObject(raw) && typeof raw.$ref === 'string' ? raw.$ref.slice(1) : `${opPointer(op)}/requestBody`;
  return Object.entries(requestBody.content as Json).map(([mediaType, media]) => ({
    mediaType,
    required: !!requestBody.required,
    schema: resolveRef<Json>(doc, media.schema),
    schemaPointer: `${base}/content/${escapeSegment(mediaType)}/schema`,
    media,
  }));
}

/** Every named request-body example of an operation (every media type), or one built from the schema. */
export function bodyExamples(doc: OpenApiDocument, op: OperationEntry): { mediaType: string; name: string; value: unknown }[] {
  return bodyMedia(doc, op).flatMap((m) => {
    const named = isObject(m.media.examples) ? Object.entries(m.media.examples) : [];
    if (named.length > 0) return named.map(([name, ex]) => ({ mediaType: m.mediaType, name, value: resolveRef<Json>(doc, ex)?.value }));
    return [{ mediaType: m.mediaType, name: 'from the schema', value: exampleValue(doc, m.media) }];
  });
}

/** A named example of a request body or a response, by operation, status ('request' for the body) and name. */
export function findExample(doc: OpenApiDocument, op: OperationEntry, status: string, name: string): { found: boolean; value: unknown } {
  const holders: Json[] =
    status === 'request'
      ? bodyMedia(doc, op).map((m) => m.media)
      : Object.values((resolveRef<Json>(doc, (op.operation.responses as Json)?.[status])?.content ?? {}) as Json);
  for (const media of holders) {
    const ex = isObject(media.examples) ? media.examples[name] : undefined;
    if (ex !== undefined) return { found: true, value: resolveRef<Json>(doc, ex)?.value };
  }
  return { found: false, value: undefined };
}

/**
 * The parts of a valid request from the examples: every path parameter and every required query,
 * header and cookie parameter; the body from the named example (or the first one).
 */
export function exampleParts(doc: OpenApiDocument, op: OperationEntry, body?: { mediaType: string; value: unknown }): RequestParts {
  const parts: RequestParts = { path: {}, query: {}, headers: {}, cookies: {} };
  for (const param of operationParameters(doc, op)) {
    if (param.in !== 'path' && !param.required) continue;
    const value = exampleValue(doc, param.holder);
    if (param.in === 'path') parts.path[param.name] = value;
    else if (param.in === 'query') parts.query[param.name] = value;
    else if (param.in === 'header') parts.headers[param.name.toLowerCase()] = String(value);
    else parts.cookies[param.name] = String(value);
  }
  const chosen = body ?? bodyExamples(doc, op)[0];
  if (chosen) parts.body = { mediaType: chosen.mediaType, value: chosen.value };
  const accept = preferredAccept(doc, op);
  if (accept) parts.headers.accept = accept;
  return parts;
}

/**
 * The Accept header a probe sends: the `+json` media type when the operation answers one (the
 * diagnostics API answers XML without it, and XML bodies cannot be checked against a schema).
 */
export function preferredAccept(doc: OpenApiDocument, op: OperationEntry): string | undefined {
  const types = new Set<string>();
  for (const raw of Object.values((op.operation.responses ?? {}) as Json)) {
    for (const mediaType of Object.keys((resolveRef<Json>(doc, raw)?.content ?? {}) as Json)) types.add(mediaType);
  }
  return [...types].find((t) => /\+json$/.test(t));
}

/** Encodes parts into a request against a base URL. */
export async function renderRequest(baseUrl: string, op: OperationEntry, parts: RequestParts): Promise<HttpRequest> {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(String(parts.path[name] ?? '')));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parts.query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value])
      query.append(name, typeof one === 'object' && one !== null ? JSON.stringify(one) : String(one));
  }
  const headers = { ...parts.headers };
  const cookies = Object.entries(parts.cookies).map(([k, v]) => `${k}=${v}`);
  if (cookies.length > 0) headers.cookie = [headers.cookie, ...cookies].filter(Boolean).join('; ');
  const request: HttpRequest = { method: op.method.toUpperCase(), url: `${baseUrl}${path}${query.size > 0 ? `?${query}` : ''}`, headers };
  if (parts.body) {
    if ('raw' in parts.body) {
      headers['content-type'] ??= parts.body.mediaType;
      request.body = parts.body.raw;
    } else {
      const encoded = await encodeBody(parts.body.mediaType, parts.body.value);
      headers['content-type'] ??= encoded.contentType;
      request.body = encoded.body;
    }
  }
  return request;
}

/** A copy of parts that can be changed without touching the original. */
export function cloneParts(parts: RequestParts): RequestParts {
  return structuredClone(parts);
}
