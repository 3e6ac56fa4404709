import type { OpenApiDocument, OperationEntry } from '../spec-catalog.ts';
import { resolveRef } from './json-pointer.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

/** A request made from an operation's examples: valid against its spec by construction. */
export type ExampleRequest = {
  method: string;
  /** Path with parameters filled in and the query string. */
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array<ArrayBuffer>;
};

/** The example value of a parameter or schema: example, first named example, enum, default, or a typed stand-in. */
export function exampleValue(doc: OpenApiDocument, holder: Json | undefined): unknown {
  if (!holder) return undefined;
  if (holder.example !== undefined) return holder.example;
  const named =
    holder.examples && typeof holder.examples === 'object' && !Array.isArray(holder.examples)
      ? Object.values(holder.examples)[0]
      : undefined;
  if (named !== undefined) return resolveRef<Json>(doc, named)?.value;
  const schema = resolveRef<Json>(doc, holder.schema ?? holder);
  if (!schema) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return type === 'integer' || type === 'number'
    ? 1
    : type === 'boolean'
      ? true
      : type === 'array'
        ? []
        : type === 'object'
          ? {}
          : 'example';
}

/** Builds a request for an operation from its examples (path, required query/header params, body). */
export async function buildExampleRequest(doc: OpenApiDocument, op: OperationEntry): Promise<ExampleRequest> {
  const pathItem = doc.paths[op.path] as Json;
  const parameters = [...((op.operation.parameters as unknown[]) ?? []), ...((pathItem.parameters as unknown[]) ?? [])]
    .map((p) => resolveRef<Json>(doc, p))
    .filter((p): p is Json => !!p);
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const param of parameters) {
    const value = exampleValue(doc, param);
    if (param.in === 'path') path = path.replace(`{${param.name}}`, encodeURIComponent(String(value)));
    else if (!param.required) continue;
    else if (param.in === 'query') query.set(param.name, String(value));
    else if (param.in === 'header') headers[param.name.toLowerCase()] = String(value);
    else if (param.in === 'cookie')
      headers.cookie = `${headers.cookie ? `${headers.cookie}; ` : ''}${param.name}=${encodeURIComponent(String(value))}`;
  }
  const request: ExampleRequest = { method: op.method.toUpperCase(), url: query.size ? `${path}?${query}` : path, headers };
  const requestBody = resolveRef<Json>(doc, op.operation.requestBody);
  const [mediaType, media] = Object.entries((requestBody?.content ?? {}) as Json)[0] ?? [];
  if (mediaType && media) {
    const encoded = await encodeBody(mediaType, exampleValue(doc, media));
    request.headers['content-type'] = encoded.contentType;
    request.body = encoded.body;
  }
  return request;
}

/** Encodes a body value in a media type; multipart and form bodies through the platform's own encoders. */
export async function encodeBody(mediaType: string, value: unknown): Promise<{ contentType: string; body: Uint8Array<ArrayBuffer> }> {
  if (mediaType === 'multipart/form-data') {
    const form = new FormData();
    for (const [key, field] of Object.entries((value ?? {}) as Json)) {
      form.append(key, typeof field === 'string' ? new Blob([field]) : new Blob([JSON.stringify(field)]), key);
    }
    const response = new Response(form);
    return { contentType: response.headers.get('content-type')!, body: new Uint8Array(await response.arrayBuffer()) };
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(Object.entries((value ?? {}) as Json).map(([k, v]): [string, string] => [k, String(v)]));
    return { contentType: mediaType, body: utf8(form.toString()) };
  }
  if (typeof value === 'string' && !/json/.test(mediaType)) return { contentType: mediaType, body: utf8(value) };
  return { contentType: mediaType, body: utf8(JSON.stringify(value)) };
}

const utf8 = (text: string) => new TextEncoder().encode(text);
