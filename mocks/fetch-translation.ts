import { Readable } from 'node:stream';
import type { HandlerResponse } from '../src/server/handler-types.ts';
import type { IncomingRequest } from '../src/server/role-app.ts';

/** Statuses whose answers carry no body (a fetch Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch Request as the HTTP adapter would hand it to a role app: lower-case headers, including the
 * `host` and `content-length` a socket would have carried, the body as bytes (undefined when empty).
 */
export async function toIncomingRequest(request: Request, target: { path: string; search: string }, requestId: string): Promise<IncomingRequest> {
  const bytes = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { host: new URL(request.url).host, ...Object.fromEntries(request.headers) };
  if (bytes && bytes.length > 0) headers['content-length'] = String(bytes.length);
  return {
    method: request.method,
    url: `${target.path}${target.search}`,
    headers,
    rawBody: bytes && bytes.length > 0 ? bytes : undefined,
    requestId,
  };
}

/** A handler's answer as a fetch Response, encoded as the HTTP adapter writes it (JSON, text, bytes, stream). */
export function toFetchResponse(response: HandlerResponse, requestId: string): Response {
  const headers = new Headers({ 'x-request-id': requestId });
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    if (typeof value === 'string') headers.set(name, value);
    else for (const item of value) headers.append(name, item);
  }
  const body = response.body;
  let payload: BodyInit | null = null;
  let contentType = response.contentType;
  if (body instanceof Readable) {
    payload = Readable.toWeb(body) as ReadableStream<Uint8Array>;
    contentType ??= 'application/octet-stream';
  } else if (Buffer.isBuffer(body)) {
    payload = new Uint8Array(body);
  } else if (typeof body === 'string' && contentType && !/json/.test(contentType)) {
    payload = body;
  } else if (body !== undefined && body !== null) {
    payload = JSON.stringify(body);
    contentType ??= 'application/json';
  }
  if (payload !== null) headers.set('content-type', contentType ?? 'application/octet-stream');
  return new Response(NULL_BODY.has(response.status) ? null : payload, { status: response.status, headers });
}
