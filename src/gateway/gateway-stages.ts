import { portolanError, type ErrorCode } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { RoleApp, ErrorRenderer } from '../server/role-app.ts';
import type { Stage, StageResponse, StagedRequest } from '../server/stages.ts';
import { hasBody } from '../server/body-policy.ts';
import { splitTarget } from '../server/request-parsing.ts';
import { isWritable } from '../lib/answer-writer.ts';
import { isRegistrationRequest, type RegistrationRoute } from './registration-route.ts';
import { authorizationFields, readBearerToken, type RateLimiter } from './rate-limit/index.ts';
import type { ReverseProxy } from '../traffic/index.ts';

/** What the gateway needs of the rate limiter (E): one decision per request. */
export type GatewayLimiter = Pick<RateLimiter, 'check'>;

/** What the gateway needs of its pool: one exchange with a member, its answer streamed. */
export type GatewayProxy = Pick<ReverseProxy, 'exchange'>;

export type GatewayStageOptions = {
  /** The gateway role's own operations (E status, D registration, H sessions, G health and pool). */
  app: RoleApp;
  /** The gateway's error shape `{error, error-message}`. */
  renderError: ErrorRenderer;
  limiter: GatewayLimiter;
  proxy: GatewayProxy;
  registration: RegistrationRoute;
  logger: Logger;
};

const STATUS_PATH = '/rate_limit_status';
const CLIENT_CLOSED = 499;

/**
 * The gateway role as ordered stages, run by the one HTTP adapter (and in-process by the MSW handlers):
 * 1. the rate limiter (E) counts requests with a bearer token and answers 429 past the limit, 400 to an
 *    Authorization that names Bearer but is not one `Bearer <token>` (`GET /rate_limit_status` is never counted);
 * 2. a registration request (D: POST + configured path + configured Host) is answered here, its body
 *    read up to the registration cap (none declared: empty), its connection bounded by the
 *    registration session timeout and lifetime;
 * 3. an exact method and path of the gateway's own operations is answered here;
 * 4. everything else is passed on to the pool, bodies streamed both ways.
 */
export function createGatewayStages(options: GatewayStageOptions): Stage[] {
  const { app, registration, renderError } = options;
  const gatewayError = (request: StagedRequest, code: ErrorCode, message: string) => renderError(portolanError(code, message), request);
  const pathOf = (url: string) => splitTarget(url).path;

  const limit: Stage = async (request) => {
    // Every Authorization field, not node's first one only: the member behind receives them all.
    const authorization = authorizationFields(request.rawHeaders);
    if (request.method === 'GET' && pathOf(request.url) === STATUS_PATH) {
      // Never counted; refused like any other request when its fields are malformed (the handler sees node's first only).
      const reading = readBearerToken(authorization);
      return reading.kind === 'malformed' ? malformedBearer(request, reading.reason) : undefined;
    }
    const decision = await options.limiter.check(authorization);
    if (decision.kind === 'limited')
      return { status: 429, body: decision.status, headers: { 'retry-after': String(decision.retryAfterSeconds) } };
    if (decision.kind === 'malformed') return malformedBearer(request, decision.reason);
    if (decision.kind === 'unavailable')
      return gatewayError(request, 'unavailable', 'rate-limit counter store unavailable; try again later');
    return undefined;
  };

  /** RFC 6750 3.1 invalid_request: 400 with the challenge, in the gateway's shape (specs/rate-limit.yaml MalformedBearer). */
  const malformedBearer = (request: StagedRequest, reason: string): StageResponse => {
    const rendered = gatewayError(request, 'invalidRequest', reason);
    return { ...rendered, headers: { ...rendered.headers, 'www-authenticate': 'Bearer error="invalid_request"' } };
  };

  const register: Stage = (request) => {
    const url = request.url;
    const path = pathOf(url);
    if (path !== registration.path || !isRegistrationRequest(registration, request.method, request.headers.host)) return undefined;
    request.connection.setIdleTimeout(registration.sessionTimeoutSeconds * 1000);
    request.connection.closeAfter(
      registration.sessionLifetimeSeconds * 1000,
      'registration session lifetime ended before the answer; closing the connection',
    );
    const rerouted = { ...request, url: `${registration.operationPath}${url.slice(path.length)}` };
    // Seed D reads the body by its declared length: without a Content-Length it is empty.
    if (request.headers['content-length'] === undefined) return app.handle({ ...rerouted, body: undefined });
    return app.handle(rerouted, { bodyLimitBytes: registration.maxBodyBytes });
  };

  const own: Stage = (request) => {
    const operation = app.match(request.method, pathOf(request.url));
    // registerClient is reached only through the registration rule above (its spec path may differ
    // from the configured one); a registration-shaped request that is not one goes to the pool.
    if (!operation || operation.operationId === 'registerClient') return undefined;
    return app.handle(request);
  };

  const passOn = passOnStage({ proxy: options.proxy, renderError, logger: options.logger });

  return [limit, register, own, passOn];
}

/**
 * The gateway's last stage: every request passed on to a member of the pool, its answer streamed back
 * (the adapter writes it), or the gateway's own 502/504 when there is none.
 */
export function passOnStage(options: { proxy: GatewayProxy; renderError: ErrorRenderer; logger: Logger }): Stage {
  const gatewayError = (request: StagedRequest, code: ErrorCode, message: string) =>
    options.renderError(portolanError(code, message), request);
  return async (request): Promise<StageResponse> => {
    const answer = await options.proxy.exchange({
      method: request.method,
      url: request.url,
      rawHeaders: request.rawHeaders,
      ...(request.remoteAddress ? { clientAddress: request.remoteAddress } : {}),
      body: hasBody(request.headers) && request.body ? request.body : null,
      signal: request.signal,
    });
    if (answer.kind === 'cancelled') return { status: CLIENT_CLOSED, operationId: 'proxy', log: { member: answer.member } };
    if (answer.kind === 'failed') {
      options.logger.warn({ requestId: request.requestId, member: answer.member, reason: answer.message }, 'request not passed on');
      return {
        ...gatewayError(request, answer.code, answer.message),
        operationId: 'proxy',
        ...(answer.member ? { log: { member: answer.member } } : {}),
      };
    }
    if (!isWritable(answer.headers)) {
      answer.body.destroy();
      const message = `pool member ${answer.member} sent an answer that cannot be passed on (invalid header field)`;
      options.logger.warn({ requestId: request.requestId, member: answer.member }, message);
      return { ...gatewayError(request, 'badGateway', message), operationId: 'proxy', log: { member: answer.member } };
    }
    return {
      status: answer.status,
      statusText: answer.statusText,
      rawHeaders: answer.headers,
      body: answer.body,
      operationId: 'proxy',
      log: { member: answer.member },
    };
  };
}
