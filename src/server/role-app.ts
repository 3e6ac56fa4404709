import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Transform, type Readable } from 'node:stream';
import { portolanError, type PortolanError } from '../lib/errors.ts';
import { isDatabaseError } from '../stores/database-error.ts';
import type { ResponseChecker } from '../lib/contract/response-check.ts';
import type { Logger } from '../lib/logger.ts';
import { isFailure, type HandlerMap, type HandlerOutcome, type HandlerRequest, type HandlerResponse } from './handler-types.ts';
import type { InterfaceRuntime, RuntimeOperation } from './interface-runtime.ts';
import { createRouteTable, UNLIMITED_PARAM_LENGTH } from './route-table.ts';
import { parseBody, parseCookies, parseQuery } from './request-parsing.ts';
import { serializedBody } from './lasting-body.ts';
import { admitBody, mediaTypeOf, tooLarge } from './body-policy.ts';
import { BodyTimeout, BodyTooLarge, readBody } from './request-body.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { authenticate, isOpen, missingAuthenticators, operationSecurity, type Authenticators } from './security.ts';
import { describeProblems, toProblems, MAX_PROBLEMS } from './validation-problems.ts';

/** Renders an expected failure in one interface's wire shape (some negotiate it from the request). */
export type ErrorRenderer = (error: PortolanError, request: ErrorContext) => HandlerResponse;

/** What a renderer may read of the request it answers (content negotiation, the real products' `referer`). */
export type ErrorContext = { headers: IncomingHttpHeaders; remoteAddress?: string | undefined };

/** A request as the HTTP adapter hands it over: the head parsed, the body not read yet. */
export type IncomingRequest = {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The unread body (the socket's stream, or a fetch body in-process). */
  body: Readable | undefined;
  requestId: string;
  /** The client's address (keys the login backoff). */
  remoteAddress?: string | undefined;
};

export type RoleInterface = {
  runtime: InterfaceRuntime;
  handlers: HandlerMap;
  renderError: ErrorRenderer;
  /** The interface's authenticators by scheme name: every scheme its operations use must have one. */
  authenticators?: Authenticators;
  /** Set in tests: every handler response is checked against the spec, a violation becomes a 500. */
  checkResponse?: ResponseChecker;
  /** The interface's own answer to a path no operation serves (under a prefix it owns); undefined: the role's 404. */
  unrouted?: (path: string) => HandlerResponse | undefined;
};

export type RoleAppOptions = {
  role: string;
  interfaces: readonly RoleInterface[];
  /** The interface whose error shape answers unknown paths and wrong methods on this role. */
  fallbackInterface: string;
  /** Largest buffered body, unless an operation declares its own (`x-portolan-max-body-bytes`). */
  bodyLimitBytes: number;
  /** How long a buffered body may take to arrive once reading began (default 30 s): then 408. */
  bodyTimeoutMs?: number;
  /** Times the body deadline (tests move it). */
  timers?: Timers;
  logger: Logger;
};

export type RoleResponse = HandlerResponse & { operationId?: string };

export type RoleApp = {
  role: string;
  operations: readonly RuntimeOperation[];
  /** The specs this role serves (some of their operations), as written: its reference pages show them. */
  specs: readonly { name: string; document: InterfaceRuntime['document'] }[];
  /** The operation an exact method and path would reach on this role, if any (no 404/405 answer). */
  match(method: string, path: string): RuntimeOperation | undefined;
  /** Answers one request; `bodyLimitBytes` replaces the limit for this request (the gateway's registration cap). */
  handle(request: IncomingRequest, options?: { bodyLimitBytes?: number }): Promise<RoleResponse>;
  /** Renders a failure outside any operation (the adapter's 408/413/414/431) in this role's shape. */
  renderError: ErrorRenderer;
};

/**
 * One role: a route table compiled once over the operations its specs serve on it, then per request,
 * each step cheaper than the next and nothing parsed twice:
 * route (404/405) -> security from the spec (401/403, before any byte of the body is read) -> body
 * policy (415/413 from the headers) -> read and parse the body once -> validate with the compiled
 * validators -> handler (501 when there is none yet) -> optional response check.
 */
export function createRoleApp(options: RoleAppOptions): RoleApp {
  const byInterface = new Map(options.interfaces.map((i) => [i.runtime.name, i]));
  const fallbackOrNone = byInterface.get(options.fallbackInterface);
  if (!fallbackOrNone) throw new Error(`role ${options.role}: fallback interface ${options.fallbackInterface} is not served`);
  const fallback: RoleInterface = fallbackOrNone;
  const operations = options.interfaces.flatMap((i) => i.runtime.operations.filter((op) => op.roles.includes(options.role)));
  for (const owner of options.interfaces) {
    const own = operations.filter((op) => op.interfaceName === owner.runtime.name);
    const missing = missingAuthenticators(
      own.flatMap((op) => op.security),
      owner.authenticators ?? {},
    );
    if (missing.length > 0)
      throw new Error(
        `role ${options.role}: interface ${owner.runtime.name} has no authenticator for security scheme ${missing.join(', ')}`,
      );
  }
  // Decided once: the security an interface's unserved paths take (its document's own).
  const documentSecurity = new Map(options.interfaces.filter((i) => i.unrouted).map((i) => [i, operationSecurity(i.runtime.document, {})]));
  // Path parameters of any length reach validation, which answers the spec's 400 (not a router 404).
  const routes = createRouteTable(operations, { maxParamLength: UNLIMITED_PARAM_LENGTH });

  /** A failure in the owner's error shape, with the headers it carries (a challenge), checked as a whole against the spec. */
  const fail = (
    owner: RoleInterface,
    error: PortolanError,
    request: IncomingRequest,
    operation?: RuntimeOperation,
    headers?: HandlerResponse['headers'],
  ): RoleResponse => {
    const rendered = owner.renderError(error, request);
    const response = headers ? { ...rendered, headers: { ...rendered.headers, ...headers } } : rendered;
    if (!operation) return response;
    // 501 is outside every contract by design (not implemented yet); any other answer must be declared.
    const checked = error.code === 'notImplemented' ? response : checkedResponse(owner, operation, response);
    return { ...checked, operationId: operation.operationId };
  };

  /** With response checking on, an answer that breaks the contract becomes a 500 naming the violation. */
  const checkedResponse = (owner: RoleInterface, operation: RuntimeOperation, response: HandlerResponse): HandlerResponse => {
    if (!owner.checkResponse) return response;
    const contentType = response.contentType ?? 'application/json';
    const violations = owner.checkResponse(operation, {
      status: response.status,
      headers: { 'content-type': contentType, ...lowerKeys(response.headers) },
      // A JSON answer a handler wrote as bytes (text it had already) is checked as the value it spells.
      body: Buffer.isBuffer(response.body) && /json/.test(contentType) ? JSON.parse(response.body.toString('utf8')) : response.body,
    });
    if (violations.length === 0) return response;
    const details = violations.map((v) => `${v.check}${v.pointer ? ` at ${v.pointer}` : ''}: ${v.message}`);
    options.logger.error(
      { operationId: operation.operationId, status: response.status, violations: details },
      'response breaks the contract',
    );
    return owner.renderError(portolanError('internal', `Response of ${operation.operationId} breaks the contract: ${details.join('; ')}`), {
      headers: {},
    });
  };

  /** A thrown failure (handler or authenticator): 503 when the store is down, else a logged 500. */
  const failed = (owner: RoleInterface, operation: RuntimeOperation, request: IncomingRequest, error: unknown): RoleResponse => {
    // A streamed body that went over its operation's limit while the handler read it.
    if (error instanceof BodyTooLarge) return fail(owner, tooLarge(error.limit), request, operation);
    if (isDatabaseError(error, 'unavailable') || isDatabaseError(error, 'closed')) {
      options.logger.warn({ err: error, operationId: operation.operationId, requestId: request.requestId }, 'store unavailable');
      return fail(owner, portolanError('unavailable', 'The store is unavailable; try again later.'), request, operation);
    }
    options.logger.error({ err: error, operationId: operation.operationId, requestId: request.requestId }, 'handler failed');
    return fail(owner, portolanError('internal'), request, operation);
  };

  /** An interface's own answer to an unserved path under its prefix, after its document's security (as any of its operations). */
  async function unroutedAnswer(owner: RoleInterface, answer: HandlerResponse, request: IncomingRequest): Promise<RoleResponse> {
    const security = documentSecurity.get(owner)!;
    if (isOpen(security)) return answer;
    const cookies = parseCookies(request.headers.cookie);
    const outcome = await authenticate(security, owner.authenticators ?? {}, {
      headers: request.headers,
      cookies,
      remoteAddress: request.remoteAddress,
    });
    if (outcome.ok) return answer;
    return fail(owner, outcome.error, request, undefined, outcome.headers);
  }

  /** Stage 1, route: the operation an exact method and path reach, or the role's 404/405 (or an interface's own unrouted answer). */
  function unmatched(request: IncomingRequest, path: string): RoleResponse | Promise<RoleResponse> {
    const served = routes.allowedMethods(path);
    const allowed = served.includes('GET') && !served.includes('HEAD') ? [...served, 'HEAD'] : served;
    // The path is not repeated: an answer never echoes the request.
    if (allowed.length === 0) {
      for (const owner of options.interfaces) {
        const answer = owner.unrouted?.(path);
        if (answer) return unroutedAnswer(owner, answer, request);
      }
      return fail(fallback, portolanError('notFound'), request);
    }
    const owner = byInterface.get(routes.find(served[0]!, path)!.operation.interfaceName) ?? fallback;
    const response = fail(
      owner,
      portolanError('methodNotAllowed', `${request.method} is not allowed on this path; allowed: ${allowed.join(', ')}.`),
      request,
    );
    return { ...response, headers: { ...response.headers, allow: allowed.join(', ') } };
  }

  /** Stage 2, security from the spec: 401/403 before any byte of the body is read. */
  async function authorize(
    owner: RoleInterface,
    operation: RuntimeOperation,
    request: IncomingRequest,
    cookies: Record<string, string>,
  ): Promise<{ ok: true; principal?: string } | { ok: false; response: RoleResponse }> {
    if (isOpen(operation.security)) return { ok: true };
    let outcome: Awaited<ReturnType<typeof authenticate>>;
    try {
      outcome = await authenticate(operation.security, owner.authenticators ?? {}, {
        headers: request.headers,
        cookies,
        remoteAddress: request.remoteAddress,
      });
    } catch (error) {
      return { ok: false, response: failed(owner, operation, request, error) };
    }
    if (outcome.ok) return outcome.principal === undefined ? { ok: true } : { ok: true, principal: outcome.principal };
    return { ok: false, response: fail(owner, outcome.error, request, operation, outcome.headers) };
  }

  /**
   * Stage 3, the body: its policy from the headers (415/413), then read (408/413) and parsed once when the
   * operation buffers it. Synchronous when the whole body arrived with the head (most do).
   */
  function readRequestBody(
    owner: RoleInterface,
    operation: RuntimeOperation,
    request: IncomingRequest,
    limit: number,
  ): BodyRead | RoleResponse | Promise<BodyRead | RoleResponse> {
    const refusal = admitBody(operation.body, request.headers, limit);
    if (refusal) return fail(owner, refusal, request, operation);
    if (operation.body.mode !== 'buffer') return NO_BODY;
    // Taken as it lies in the stream's buffer, without a read loop or a timer; else read as it arrives. The role
    // app is reached while node:http is still parsing the packet that brought the head (its body callbacks come
    // after the head's, each followed by the microtask queue): a body that came with the head is there once this
    // turn's reads are parsed, in the check phase.
    const arrived = arrivedBody(request.body, limit);
    if (arrived !== NOT_YET) return parsedBody(owner, operation, request, arrived);
    return afterReads().then(() => {
      const parsedWithHead = arrivedBody(request.body, limit);
      if (parsedWithHead !== NOT_YET) return parsedBody(owner, operation, request, parsedWithHead);
      return bodyArriving(owner, operation, request, limit);
    });
  }

  /** A body still arriving: read within the body deadline (408) and the limit (413), then parsed. */
  async function bodyArriving(
    owner: RoleInterface,
    operation: RuntimeOperation,
    request: IncomingRequest,
    limit: number,
  ): Promise<BodyRead | RoleResponse> {
    let rawBody: Buffer | undefined;
    try {
      rawBody = await readBody(request.body, limit, { timers: options.timers ?? systemTimers, ms: options.bodyTimeoutMs ?? 30_000 });
    } catch (error) {
      if (error instanceof BodyTimeout) {
        const timeout = portolanError('requestTimeout', `The request body did not arrive within ${error.timeoutMs} ms.`);
        return fail(owner, timeout, request, operation);
      }
      if (!(error instanceof BodyTooLarge)) throw error;
      return fail(owner, tooLarge(limit), request, operation);
    }
    return parsedBody(owner, operation, request, rawBody);
  }

  /** The body's bytes parsed once by their media type (malformed: 400), unless the operation parses them itself. */
  function parsedBody(owner: RoleInterface, operation: RuntimeOperation, request: IncomingRequest, rawBody: Buffer | undefined) {
    // An operation that parses its body itself gets the bytes only (body-policy.ts `parsedBy`).
    if (operation.body.parsedBy !== 'framework') return { rawBody, body: undefined };
    const parsed = parseBody(mediaTypeOf(request.headers['content-type']), rawBody);
    if (!parsed.ok) return fail(owner, parsed.error, request, operation);
    return { rawBody, body: parsed.value };
  }

  /** Stage 5, the handler's outcome: its response checked, its failure rendered in the interface's shape. */
  function answerOf(owner: RoleInterface, operation: RuntimeOperation, request: IncomingRequest, outcome: HandlerOutcome): RoleResponse {
    if (isFailure(outcome)) return fail(owner, outcome.error, request, operation, outcome.headers);
    const response = owner.checkResponse ? checkedResponse(owner, operation, outcome) : outcome;
    // A lasting body (lasting-body.ts) goes out as the bytes it was serialised to once.
    const bytes = serializedBody(response.body);
    if (bytes === undefined) return { ...response, operationId: operation.operationId };
    return { ...response, body: bytes, contentType: response.contentType ?? 'application/json', operationId: operation.operationId };
  }

  /**
   * One request through the stages: route -> authorize -> body -> validate -> handler. Plain functions that
   * return an answer, or a promise of one only where a stage waits (a scheme to check, a body still arriving,
   * a handler's store): a request that waits for nothing costs no suspended frame and no microtask turn.
   */
  function handle(request: IncomingRequest, handleOptions: { bodyLimitBytes?: number } = {}): Promise<RoleResponse> {
    try {
      const answer = route(request, handleOptions);
      return answer instanceof Promise ? answer : Promise.resolve(answer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Stage 1, route, then stage 2, security from the spec (401/403 before any byte of the body is read). */
  function route(request: IncomingRequest, handleOptions: { bodyLimitBytes?: number }): Answer {
    const target = request.url;
    const queryStart = target.indexOf('?');
    const path = queryStart === -1 ? target : target.slice(0, queryStart);
    // HEAD is served wherever GET is (RFC 9110 9.3.2): the same answer, whose body node:http leaves out.
    const match = routes.find(request.method, path) ?? (request.method === 'HEAD' ? routes.find('GET', path) : undefined);
    if (!match) return unmatched(request, path);
    const routed: Routed = {
      request,
      operation: match.operation,
      owner: byInterface.get(match.operation.interfaceName)!,
      path,
      params: match.params,
      queryString: queryStart === -1 ? '' : target.slice(queryStart + 1),
      cookies: match.operation.readsCookies ? parseCookies(request.headers.cookie) : EMPTY,
      principal: undefined,
      bodyLimitBytes: handleOptions.bodyLimitBytes,
    };
    if (isOpen(routed.operation.security)) return withBody(routed);
    return authorize(routed.owner, routed.operation, request, routed.cookies).then((authorized) => {
      if (!authorized.ok) return authorized.response;
      routed.principal = authorized.principal;
      return withBody(routed);
    });
  }

  /** Stage 3, the body (see readRequestBody), then on. */
  function withBody(routed: Routed): Answer {
    const { operation } = routed;
    if (operation.body.mode === 'none') return validated(routed, NO_BODY, Infinity);
    // A streamed body is bounded only by its operation's own limit (the buffered limit is for bodies held in memory).
    const limit =
      routed.bodyLimitBytes ?? operation.body.maxBytes ?? (operation.body.mode === 'stream' ? Infinity : options.bodyLimitBytes);
    const read = readRequestBody(routed.owner, operation, routed.request, limit);
    if (read instanceof Promise) return read.then((outcome) => (isBodyRead(outcome) ? validated(routed, outcome, limit) : outcome));
    return isBodyRead(read) ? validated(routed, read, limit) : read;
  }

  /** Stage 4, validation with the compiled validators (path and query values coerced to their schema types), then stage 5, the handler. */
  function validated(routed: Routed, read: BodyRead, limit: number): Answer {
    const { request, operation, owner } = routed;
    const query = parseQuery(routed.queryString);
    for (const name of operation.arrayQueryParameters) {
      if (typeof query[name] === 'string') query[name] = [query[name]];
    }
    const body = read.body;
    const parts: Record<string, unknown> = { path: routed.params, query, header: request.headers, cookie: routed.cookies };
    if (body !== undefined && !Buffer.isBuffer(body)) parts.requestBody = body;
    const invalid = validate(operation, parts);
    if (invalid) return fail(owner, invalid, request, operation);

    // The handler, 501 when there is none.
    const handler = owner.handlers[operation.operationId];
    if (!handler) {
      return fail(owner, portolanError('notImplemented', `${operation.operationId} is not implemented yet.`), request, operation);
    }
    const handlerRequest = new RoutedRequest(options.role, routed, query, body, read.rawBody);
    if (operation.body.mode === 'stream' && request.body)
      handlerRequest.bodyStream = limit === Infinity ? request.body : limitedStream(request.body, limit);
    let outcome: ReturnType<typeof handler>;
    try {
      outcome = handler(handlerRequest);
    } catch (error) {
      return failed(owner, operation, request, error);
    }
    if (!(outcome instanceof Promise)) return answerOf(owner, operation, request, outcome);
    return outcome.then(
      (settled) => answerOf(owner, operation, request, settled),
      (error: unknown) => failed(owner, operation, request, error),
    );
  }

  return {
    role: options.role,
    operations,
    specs: options.interfaces.map((i) => ({ name: i.runtime.name, document: i.runtime.document })),
    match: (method, path) => routes.find(method, path)?.operation,
    handle,
    renderError: fallback.renderError,
  };
}

/**
 * Runs openapi-backend's compiled validators (body, then parameters) on the request parsed once. The
 * parameters validator coerces path and query values to their schema types in place, so handlers get
 * numbers where the spec says integer. A streamed body is not validated here (its handler reads it),
 * nor one whose operation says `x-portolan-body-validation: handler`.
 */
function validate(operation: RuntimeOperation, parameters: Record<string, unknown>): PortolanError | undefined {
  let errors: ErrorObject[] | undefined;
  for (const validator of validatorsOf(operation)) {
    try {
      if (!validator(parameters)) (errors ??= []).push(...(validator.errors ?? []));
    } catch (error) {
      // A value nested deeper than the validator can recurse: refused, never a 500.
      if (error instanceof RangeError) return portolanError('invalidRequest', 'Invalid request: the body is nested too deeply.');
      throw error;
    }
  }
  if (errors === undefined || errors.length === 0) return undefined;
  const problems = toProblems(errors);
  return portolanError(
    'invalidRequest',
    describeProblems(problems, Math.max(errors.length, problems.length)),
    problems.slice(0, MAX_PROBLEMS),
  );
}

const runValidators = new WeakMap<RuntimeOperation, readonly ValidateFunction[]>();

/** The validators a request of the operation runs, decided on its first request: a streamed body, or one its handler validates, skips the body validator (the first). */
function validatorsOf(operation: RuntimeOperation): readonly ValidateFunction[] {
  let validators = runValidators.get(operation);
  if (validators === undefined) {
    const skipBody = operation.body.mode === 'stream' || (operation.body.validatedBy === 'handler' && operation.body.mode !== 'none');
    validators = skipBody ? operation.validators().slice(-1) : operation.validators();
    runValidators.set(operation, validators);
  }
  return validators;
}

/** The body as a stream that fails with BodyTooLarge once more than `limit` bytes have passed. */
function limitedStream(body: Readable, limit: number): Readable {
  let seen = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > limit ? new BodyTooLarge(limit) : null, seen > limit ? undefined : chunk);
    },
  });
  body.once('error', (error) => limited.destroy(error));
  return body.pipe(limited);
}

const EMPTY: Readonly<Record<string, string>> = Object.freeze(Object.create(null));

/** An answer now, or once a stage has waited. */
type Answer = RoleResponse | Promise<RoleResponse>;

/** A request routed to its operation, as the later stages take it. */
type Routed = {
  request: IncomingRequest;
  operation: RuntimeOperation;
  owner: RoleInterface;
  path: string;
  params: Record<string, string>;
  queryString: string;
  cookies: Record<string, string>;
  /** Who the operation's security authenticated, when a scheme names a user. */
  principal: string | undefined;
  bodyLimitBytes: number | undefined;
};

/**
 * What a handler sees of a request (HandlerRequest): one class, so building it per request copies nothing and
 * allocates no closure; the cookies are parsed here only when the spec reads them, otherwise on a handler's first look.
 */
class RoutedRequest implements HandlerRequest {
  readonly operationId: string;
  readonly role: string;
  readonly method: string;
  readonly path: string;
  readonly params: Record<string, string>;
  readonly query: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly rawBody: Buffer | undefined;
  readonly requestId: string;
  // Declared only: own properties when set, absent otherwise (as the optional fields of HandlerRequest).
  declare bodyStream?: Readable;
  declare principal?: string;
  declare remoteAddress?: string;
  #cookies: Record<string, string> | undefined;

  constructor(role: string, routed: Routed, query: Record<string, unknown>, body: unknown, rawBody: Buffer | undefined) {
    const { operation, request } = routed;
    this.operationId = operation.operationId;
    this.role = role;
    this.method = request.method;
    this.path = routed.path;
    this.params = routed.params;
    this.query = query;
    this.headers = request.headers;
    this.body = body;
    this.rawBody = rawBody;
    this.requestId = request.requestId;
    this.#cookies = operation.readsCookies ? routed.cookies : undefined;
    if (routed.principal !== undefined) this.principal = routed.principal;
    if (request.remoteAddress !== undefined) this.remoteAddress = request.remoteAddress;
  }

  get cookies(): Record<string, string> {
    return this.#cookies ?? parseCookies(this.headers.cookie);
  }
}

/** A request body as read and parsed: its bytes, and its value when the role app parsed it. */
type BodyRead = { rawBody: Buffer | undefined; body: unknown };
const NO_BODY: BodyRead = Object.freeze({ rawBody: undefined, body: undefined });
const isBodyRead = (outcome: BodyRead | RoleResponse): outcome is BodyRead => !('status' in outcome);

/** Resolves in the check phase of this turn of the event loop, after the reads of its poll phase were handled. */
const afterReads = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The body is not all in the stream's buffer yet: it is read as it arrives. */
const NOT_YET = Symbol('not yet');

/**
 * The whole body, when the request has already been received to its end (node:http's `complete`) and nobody
 * read from it: taken from the stream's buffer in one read. NOT_YET otherwise (still arriving, over the limit,
 * or a stream that is not a request), for readBody to read as it comes; undefined for an empty body.
 */
function arrivedBody(stream: Readable | undefined, limit: number): Buffer | undefined | typeof NOT_YET {
  if (stream === undefined) return undefined;
  if ((stream as Readable & { complete?: boolean }).complete !== true || stream.readableFlowing !== null || stream.readableLength > limit)
    return NOT_YET;
  const chunk: Buffer | string | null = stream.read();
  if (chunk === null) return undefined;
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  return bytes.length === 0 ? undefined : bytes;
}

function lowerKeys(headers: HandlerResponse['headers']) {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}
