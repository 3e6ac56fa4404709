import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import hyperid from 'hyperid';
import { portolanError, type ErrorCode } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { HandlerResponse } from '../server/handler-types.ts';
import { BodyTooLarge, readBody, writeResponse, type RoleServer } from '../server/http-adapter.ts';
import type { ErrorRenderer, RoleApp } from '../server/role-app.ts';
import { listenOn, closeServer } from '../server/listen.ts';
import { isRegistrationRequest, type RegistrationRoute } from './registration-route.ts';
import type { RateLimiter } from './rate-limit/index.ts';
import type { Proxy } from './pool/index.ts';

/** What the gateway needs of the rate limiter (E): one decision per request. */
export type GatewayLimiter = Pick<RateLimiter, 'check'>;

/** What the gateway needs of its pool: pass a request on, streaming both ways. */
export type GatewayProxy = Pick<Proxy, 'forward'>;

export type GatewayServerOptions = {
  /** The gateway role's own operations (E status, D registration, H sessions, G health and pool). */
  app: RoleApp;
  /** The gateway's error shape `{error, error-message}`. */
  renderError: ErrorRenderer;
  /** The registration shape: the gateway's plus `Connection: close` and `Cache-Control: no-store`. */
  renderRegistrationError: ErrorRenderer;
  limiter: GatewayLimiter;
  proxy: GatewayProxy;
  registration: RegistrationRoute;
  bodyLimitBytes: number;
  logger: Logger;
  metrics: Metrics;
};

const STATUS_PATH = '/rate_limit_status';

/**
 * The gateway's HTTP adapter: a small traffic manager. On every request, in this order:
 * 1. the rate limiter (E) counts requests with a bearer token and answers 429 past the limit
 *    (`GET /rate_limit_status` is never counted);
 * 2. a registration request (D: POST + configured path + configured Host) is answered here, its
 *    body read by Content-Length up to the registration cap, on a connection bounded by the
 *    registration session timeout and lifetime;
 * 3. an exact method and path of the gateway's own operations is answered here;
 * 4. everything else is passed on to the pool, bodies streamed both ways.
 */
export function createGatewayServer(options: GatewayServerOptions): RoleServer {
  const nextId = hyperid({ urlSafe: true });
  const log = options.logger.child({ role: options.app.role });
  const { app, registration } = options;

  const answer = (res: ServerResponse, response: HandlerResponse, requestId: string) => {
    if (!res.headersSent) writeResponse(res, response, requestId);
  };

  /** The gateway's own operations: the whole body is read (bounded), then the role app answers. */
  const answerOwn = async (req: IncomingMessage, res: ServerResponse, requestId: string, url: string, limit: number, renderError: ErrorRenderer) => {
    let response: HandlerResponse & { operationId?: string };
    try {
      const rawBody = await readBody(req, limit);
      response = await app.handle({ method: req.method ?? 'GET', url, headers: req.headers, rawBody, requestId });
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      const tooLarge = renderError(portolanError('payloadTooLarge', `The request body exceeds the limit of ${limit} bytes.`), req);
      response = { ...tooLarge, headers: { ...tooLarge.headers, connection: 'close' } };
    }
    answer(res, response, requestId);
    return response;
  };

  /** D: the body is collected per its Content-Length (none declared: an empty body), on a bounded session. */
  const answerRegistration = async (req: IncomingMessage, res: ServerResponse, requestId: string, query: string) => {
    const socket = req.socket;
    socket.setTimeout(registration.sessionTimeoutSeconds * 1000);
    const lifetime = setTimeout(() => {
      log.warn({ requestId }, 'registration session lifetime ended before the answer; closing the connection');
      socket.destroy();
    }, registration.sessionLifetimeSeconds * 1000);
    lifetime.unref();
    res.once('close', () => clearTimeout(lifetime));
    const url = `${registration.operationPath}${query}`;
    if (req.headers['content-length'] !== undefined) {
      return answerOwn(req, res, requestId, url, registration.maxBodyBytes, options.renderRegistrationError);
    }
    // No Content-Length: the body is not collected (seed D reads it by its declared length), so empty.
    req.resume();
    const response = await app.handle({ method: 'POST', url, headers: req.headers, rawBody: undefined, requestId });
    answer(res, response, requestId);
    return response;
  };

  const server = createServer(async (req, res) => {
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    if (method === 'GET' && url === '/metrics') {
      const text = await options.metrics.render();
      res.writeHead(200, { 'content-type': options.metrics.contentType, 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const requestId = nextId();
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const query = queryStart === -1 ? '' : url.slice(queryStart);
    let outcome: { status: number; operationId?: string; member?: string };
    try {
      outcome = await route();
    } catch (error) {
      log.error({ err: error, requestId }, 'gateway request failed');
      if (res.headersSent) res.destroy();
      else answer(res, options.renderError(portolanError('internal'), req), requestId);
      outcome = { status: 500 };
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    options.metrics.observe(app.role, outcome.operationId ?? (outcome.member ? 'proxy' : undefined), outcome.status, seconds);
    log.info({ requestId, method, operationId: outcome.operationId, member: outcome.member, status: outcome.status, ms: Math.round(seconds * 1e5) / 100 }, 'request');

    async function route(): Promise<{ status: number; operationId?: string; member?: string }> {
      if (!(method === 'GET' && path === STATUS_PATH)) {
        const decision = await options.limiter.check(req.headers.authorization);
        if (decision.kind === 'limited') {
          const retryAfter = String(decision.retryAfterSeconds);
          answer(res, { status: 429, body: decision.status, headers: { 'retry-after': retryAfter } }, requestId);
          return { status: 429 };
        }
        if (decision.kind === 'unavailable') {
          const refusal = gatewayError('unavailable', 'rate-limit counter store unavailable; try again later');
          answer(res, refusal, requestId);
          return { status: refusal.status };
        }
      }
      if (path === registration.path && isRegistrationRequest(registration, method, req.headers.host)) {
        return answerRegistration(req, res, requestId, query);
      }
      // registerClient is reached only through the registration rule above (its spec path may differ
      // from the configured one); a registration-shaped request that is not one goes to the pool.
      const own = app.match(method, path);
      if (own && own.operationId !== 'registerClient') return answerOwn(req, res, requestId, url, options.bodyLimitBytes, options.renderError);
      return options.proxy.forward(req, res, { requestId, renderError: gatewayError });
    }

    function gatewayError(code: ErrorCode, message: string) {
      return options.renderError(portolanError(code, message), req);
    }
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  return { server, listen: (port, host) => listenOn(server, port, host), close: (timeoutMs) => closeServer(server, timeoutMs) };
}
