import { Readable } from 'node:stream';
import { isRelayedBody, relayedToReadable } from '../src/lib/relayed-body.ts';
import type { HandlerResponse } from '../src/server/handler-types.ts';
import { NO_CONNECTION, type StagedRequest, type StageResponse } from '../src/server/stages.ts';

/** Statuses whose answers carry no body (a fetch Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch Request as the HTTP adapter hands it to a role's stages: lower-case headers, including the
 * `host` and `content-length` a socket would have carried, the same fields as a raw list, the body as
 * a stream (undefined when empty), the request's own abort signal, and no connection to control.
 */
export async function toStagedRequest(
  request: Request,
  target: { path: string; search: string },
  requestId: string,
): Promise<StagedRequest> {
  const bytes = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { host: new URL(request.url).host, ...Object.fromEntries(request.headers) };
  if (bytes && bytes.length > 0) headers['content-length'] = String(bytes.length);
  return {
    method: request.method,
    url: `${target.path}${target.search}`,
    headers,
    rawHeaders: Object.entries(headers).flat(),
    body: bytes && bytes.length > 0 ? Readable.from([bytes]) : undefined,
    requestId,
    remoteAddress: '127.0.0.1',
    signal: request.signal,
    connection: NO_CONNECTION,
  };
}

/** Fields a fetch Response frames itself: a passed-on answer's own are dropped. */
const FRAMING = new Set(['transfer-encoding', 'content-length', 'connection', 'keep-alive']);

/** A handler's answer as a fetch Response, encoded as the HTTP adapter writes it (JSON, text, bytes, stream). */
export function toFetchResponse(response: HandlerResponse & Pick<StageResponse, 'rawHeaders' | 'statusText'>, requestId: string): Response {
  if (response.rawHeaders) {
    const fields = new Headers();
    for (let i = 0; i < response.rawHeaders.length; i += 2) {
      const name = response.rawHeaders[i]!;
      if (!FRAMING.has(name.toLowerCase())) fields.append(name, response.rawHeaders[i + 1] ?? '');
    }
    const source = isRelayedBody(response.body) ? relayedToReadable(response.body) : response.body;
    const stream = source instanceof Readable ? (Readable.toWeb(source) as ReadableStream<Uint8Array>) : null;
    return new Response(NULL_BODY.has(response.status) ? null : stream, {
      status: response.status,
      ...(response.statusText ? { statusText: response.statusText } : {}),
      headers: fields,
    });
  }
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
