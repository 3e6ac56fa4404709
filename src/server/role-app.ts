import { portolanError, type PortolanError } from '../lib/errors.ts';
import { isDatabaseError } from '../stores/database-error.ts';
import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { ResponseChecker } from '../lib/contract/response-check.ts';
import type { Logger } from '../lib/logger.ts';
import type { HandlerMap, HandlerRequest, HandlerResponse } from './handler-types.ts';
import type { InterfaceRuntime, RuntimeOperation } from './interface-runtime.ts';
import { createRouteTable } from './route-table.ts';
import { parseBody, parseCookies, parseQuery } from './request-parsing.ts';

/** Renders an expected failure in one interface's wire shape (some negotiate it from the request). */
export type ErrorRenderer = (error: PortolanError, request: { headers: Record<string, string | string[] | undefined> }) => HandlerResponse;

/** A request as the HTTP adapter hands it over: bytes in, nothing parsed yet. */
export type IncomingRequest = {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer | undefined;
  requestId: string;
};

export type RoleInterface = {
  runtime: InterfaceRuntime;
  handlers: HandlerMap;
  renderError: ErrorRenderer;
  /** Set in tests: every handler response is checked against the spec, a violation becomes a 500. */
  checkResponse?: ResponseChecker;
};

export type RoleAppOptions = {
  role: string;
  interfaces: readonly RoleInterface[];
  /** The interface whose error shape answers unknown paths and wrong methods on this role. */
  fallbackInterface: InterfaceName;
  logger: Logger;
};

export type RoleApp = {
  role: string;
  operations: readonly RuntimeOperation[];
  /** The operation an exact method and path would reach on this role, if any (no 404/405 answer). */
  match(method: string, path: string): RuntimeOperation | undefined;
  handle(request: IncomingRequest): Promise<HandlerResponse & { operationId?: string }>;
};

/**
 * One role: a route table compiled once over the operations its specs serve on it, then per request
 * route -> parse -> validate -> handler (501 when there is none yet) -> optional response check.
 */
export function createRoleApp(options: RoleAppOptions): RoleApp {
  const byInterface = new Map(options.interfaces.map((i) => [i.runtime.name, i]));
  const fallback = byInterface.get(options.fallbackInterface);
  if (!fallback) throw new Error(`role ${options.role}: fallback interface ${options.fallbackInterface} is not served`);
  const operations = options.interfaces.flatMap((i) => i.runtime.operations.filter((op) => op.roles.includes(options.role)));
  const routes = createRouteTable(operations);

  const fail = (owner: RoleInterface, error: PortolanError, request: IncomingRequest, operation?: RuntimeOperation) => {
    const response = owner.renderError(error, request);
    if (!operation) return response;
    // 501 is outside every contract by design (not implemented yet); any other answer must be declared.
    const checked = error.code === 'notImplemented' ? response : checkedResponse(owner, operation, response);
    return { ...checked, operationId: operation.operationId };
  };

  /** With response checking on, an answer that breaks the contract becomes a 500 naming the violation. */
  const checkedResponse = (owner: RoleInterface, operation: RuntimeOperation, response: HandlerResponse): HandlerResponse => {
    if (!owner.checkResponse) return response;
    const violations = owner.checkResponse(operation, {
      status: response.status,
      headers: { 'content-type': response.contentType ?? 'application/json', ...lowerKeys(response.headers) },
      body: response.body,
    });
    if (violations.length === 0) return response;
    const details = violations.map((v) => `${v.check}${v.pointer ? ` at ${v.pointer}` : ''}: ${v.message}`);
    options.logger.error({ operationId: operation.operationId, status: response.status, violations: details }, 'response breaks the contract');
    return owner.renderError(portolanError('internal', `Response of ${operation.operationId} breaks the contract: ${details.join('; ')}`), { headers: {} });
  };

  return {
    role: options.role,
    operations,
    match: (method, path) => routes.find(method, path)?.operation,
    async handle(request) {
      const queryStart = request.url.indexOf('?');
      const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
      const match = routes.find(request.method, path);
      if (!match) {
        const allowed = routes.allowedMethods(path);
        if (allowed.length === 0) return fail(fallback, portolanError('notFound', `No resource at ${request.method} ${truncate(path)}.`), request);
        const owner = byInterface.get(routes.find(allowed[0]!, path)!.operation.interfaceName) ?? fallback;
        const response = fail(owner, portolanError('methodNotAllowed', `${request.method} is not allowed on this path; allowed: ${allowed.join(', ')}.`), request);
        return { ...response, headers: { ...response.headers, allow: allowed.join(', ') } };
      }
      const { operation, params } = match;
      const owner = byInterface.get(operation.interfaceName)!;
      const query = parseQuery(queryStart === -1 ? '' : request.url.slice(queryStart + 1));
      const parsed = await parseBody(request.headers['content-type'], request.rawBody);
      if (!parsed.ok) return fail(owner, parsed.error, request, operation);

      const problems = owner.runtime.validateRequest(operation, {
        method: request.method,
        path,
        headers: request.headers,
        query,
        body: forValidation(parsed.value),
      });
      if (problems.length > 0) {
        return fail(owner, portolanError('invalidRequest', `Invalid request: ${problems.join('; ')}.`, problems), request, operation);
      }
      const handler = owner.handlers[operation.operationId];
      if (!handler) {
        return fail(owner, portolanError('notImplemented', `${operation.operationId} is not implemented yet.`), request, operation);
      }
      const handlerRequest: HandlerRequest = {
        operationId: operation.operationId,
        role: options.role,
        method: request.method,
        path,
        params,
        query,
        headers: request.headers,
        cookies: parseCookies(request.headers.cookie),
        body: parsed.value,
        rawBody: request.rawBody,
        requestId: request.requestId,
      };
      let response: HandlerResponse;
      try {
        response = await handler(handlerRequest);
      } catch (error) {
        if (isDatabaseError(error, 'unavailable') || isDatabaseError(error, 'closed')) {
          options.logger.warn({ err: error, operationId: operation.operationId, requestId: request.requestId }, 'store unavailable');
          return fail(owner, portolanError('unavailable', 'The store is unavailable; try again later.'), request, operation);
        }
        options.logger.error({ err: error, operationId: operation.operationId, requestId: request.requestId }, 'handler failed');
        return fail(owner, portolanError('internal'), request, operation);
      }
      return { ...checkedResponse(owner, operation, response), operationId: operation.operationId };
    },
  };
}

/** Files of a multipart body are validated as strings (`format: binary`); handlers get the Files. */
function forValidation(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Buffer.isBuffer(body)) return body;
  if (!Object.values(body).some((v) => v instanceof File)) return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v instanceof File ? `<file ${v.size} bytes>` : v]));
}

const truncate = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}...` : s);

function lowerKeys(headers: HandlerResponse['headers']) {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

