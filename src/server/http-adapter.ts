import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import hyperid from 'hyperid';
import { portolanError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { HandlerResponse } from './handler-types.ts';
import type { ErrorRenderer, RoleApp } from './role-app.ts';
import { closeServer, listenOn } from './listen.ts';

export type RoleServerOptions = {
  app: RoleApp;
  /** Renders the adapter's own failures (413, unreadable body) in the role's fallback error shape. */
  renderError: ErrorRenderer;
  bodyLimitBytes: number;
  logger: Logger;
  metrics: Metrics;
};

export type RoleServer = {
  server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stops accepting connections, lets in-flight requests finish (idle keep-alive connections close
   * at once), and cuts whatever is still open after `timeoutMs`.
   */
  close(timeoutMs?: number): Promise<void>;
};

/** The body is longer than the limit (declared or counted). */
export class BodyTooLarge extends Error {}

/**
 * The only code that touches sockets: reads the body (bounded), hands the request to the role app,
 * and writes what it returns. Every failure becomes a response; the process stays up.
 */
export function createRoleServer(options: RoleServerOptions): RoleServer {
  const nextId = hyperid({ urlSafe: true });
  const log = options.logger.child({ role: options.app.role });

  const server = createServer(async (req, res) => {
    const started = process.hrtime.bigint();
    if (req.method === 'GET' && req.url === '/metrics') {
      // Observability, not part of any interface's contract: answered before routing.
      const text = await options.metrics.render();
      res.writeHead(200, { 'content-type': options.metrics.contentType, 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const requestId = nextId();
    let response: HandlerResponse & { operationId?: string };
    try {
      const rawBody = await readBody(req, options.bodyLimitBytes);
      response = await options.app.handle({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        rawBody,
        requestId,
      });
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        response = options.renderError(portolanError('payloadTooLarge', `The request body exceeds ${options.bodyLimitBytes} bytes.`), req);
        response = { ...response, headers: { ...response.headers, connection: 'close' } };
      } else {
        log.error({ err: error, requestId }, 'request failed before the handler');
        response = options.renderError(portolanError('internal'), req);
      }
    }
    writeResponse(res, response, requestId);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    options.metrics.observe(options.app.role, response.operationId, response.status, ms / 1000);
    log.info({ requestId, method: req.method, operationId: response.operationId, status: response.status, ms: Math.round(ms * 100) / 100 }, 'request');
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  return { server, listen: (port, host) => listenOn(server, port, host), close: (timeoutMs) => closeServer(server, timeoutMs) };
}

/** Reads a whole request body, refusing (BodyTooLarge) past `limit` bytes, declared or counted. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw new BodyTooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new BodyTooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : Buffer.concat(chunks);
}

/** Writes a handler's answer: JSON, text, bytes or a stream, with its length and the request id. */
export function writeResponse(res: ServerResponse, response: HandlerResponse, requestId: string) {
  const headers: Record<string, string | readonly string[]> = { 'x-request-id': requestId, ...response.headers };
  const body = response.body;
  if (body instanceof Readable) {
    res.writeHead(response.status, { 'content-type': response.contentType ?? 'application/octet-stream', ...headers });
    body.pipe(res);
    return;
  }
  let payload: string | Buffer | undefined;
  let contentType = response.contentType;
  if (body === undefined || body === null) payload = undefined;
  else if (Buffer.isBuffer(body)) payload = body;
  else if (typeof body === 'string' && contentType && !/json/.test(contentType)) payload = body;
  else {
    payload = JSON.stringify(body);
    contentType ??= 'application/json';
  }
  if (payload !== undefined) {
    headers['content-type'] = contentType ?? 'application/octet-stream';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  res.writeHead(response.status, headers as Record<string, string | string[]>);
  res.end(payload);
}
