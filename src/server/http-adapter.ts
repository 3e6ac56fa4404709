import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { clientAddress } from './client-address.ts';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { drainWithin } from '../lib/drain.ts';
import { writeAnswer, type Linger, type WireAnswer } from '../lib/answer-writer.ts';
import { canonicalHeaderName } from '../lib/header-case.ts';
import { isRelayedBody } from '../lib/relayed-body.ts';
import hyperid from 'hyperid';
import { portolanError, type ErrorCode } from '../lib/errors.ts';
import type { CoreConfig } from '../lib/config.ts';
import { accessLogger, type Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { HandlerResponse } from './handler-types.ts';
import type { ErrorRenderer } from './role-app.ts';
import { runStages, type ConnectionControl, type Stage, type StageResponse } from './stages.ts';
import { closeServer, listenOn } from './listen.ts';
import { headRefusal, overflowRefusal, PARSER_HEADERS_COUNT, parserHeadLimit } from './head-limits.ts';
import { referencePagesStage, type ReferencePages } from './reference-pages.ts';
import { metricsStage } from './metrics-stage.ts';

/** What every listener sets on its clients (the settings of the same names). */
export type ClientLimits = Pick<
  CoreConfig,
  | 'maxUrlLength'
  | 'maxHeaderBytes'
  | 'headersTimeoutMs'
  | 'requestTimeoutMs'
  | 'keepAliveTimeoutMs'
  | 'maxRequestsPerSocket'
  | 'maxConnections'
>;

const NO_PROXIES: ReadonlySet<string> = new Set();

export type RoleServerOptions = {
  role: string;
  /** The role's request path, in order; the last stage always answers. */
  stages: readonly Stage[];
  /** Renders the adapter's own failures (408, 414, 431, 500) in the role's fallback error shape. */
  renderError: ErrorRenderer;
  limits: ClientLimits;
  logger: Logger;
  metrics: Metrics;
  /** Schedules the lingering close of early answers (tests move it). */
  /** Load balancers whose X-Forwarded-For names the client (PORTOLAN_TRUSTED_PROXIES, client-address.ts); default none. */
  trustedProxies?: ReadonlySet<string>;
  timers?: Timers;
  /** How long an early answer waits for the rest of an unread request body before closing (default 5 s). */
  lingerMs?: number;
  /** The role's API reference (/docs, /openapi/*; src/server/reference-pages.ts), a stage before the role's; absent, those paths go to the role's stages. */
  referencePages?: ReferencePages;
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

/** Node's parser errors and timeouts, as the registry's codes (anything else is a malformed request; an overflow is judged apart). */
const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'requestTimeout', message: 'The request was not received within the time limit.' },
};
const MALFORMED = { code: 'invalidRequest', message: 'The request is not valid HTTP/1.1.' } as const;

/**
 * The one HTTP adapter: the only code that touches sockets. It sets the client limits, gives every
 * request an id, runs the stages (its own first: /metrics and the reference pages, then the role's),
 * writes what they answer (JSON, text, bytes or a stream) through the one answer writer
 * (src/lib/answer-writer.ts), and records one metric and one log line per request. Every failure
 * becomes an answer in the role's error shape; the process stays up.
 */
export function createRoleServer(options: RoleServerOptions): RoleServer {
  const nextId = hyperid({ urlSafe: true });
  const log = options.logger.child({ role: options.role });
  // The one line per request names no credential (its fields are listed below): composed directly, not redacted.
  const accessLog = accessLogger(log);
  const { limits } = options;
  const timers = options.timers ?? systemTimers;
  const trusted = options.trustedProxies ?? NO_PROXIES;
  const linger: Linger = { timers, lingerMs: options.lingerMs ?? 5000 };
  // Every role's own pages come first, outside any interface's contract (the gateway does not pass them to
  // its pool; with PORTOLAN_REFERENCE_PAGES=false no role has reference pages and those paths go on).
  const stages: readonly Stage[] = [
    metricsStage(options.metrics, log),
    ...(options.referencePages ? [referencePagesStage(options.referencePages, log)] : []),
    ...options.stages,
  ];
  // The request a socket is busy with, so a timeout knows whether an answer has begun.
  const inFlight = new WeakMap<Duplex, ServerResponse>();

  const server = createServer(
    {
      // Node's one limit covers the target and the headers together; ours are judged apart, the target first.
      maxHeaderSize: parserHeadLimit(limits),
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval; a tenth of the shorter keeps them close.
      connectionsCheckingInterval: Math.max(50, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs || Infinity) / 10),
    },
    async (req, res) => {
      const started = process.hrtime.bigint();
      const url = originForm(req.url ?? '/');
      const overLimit = headRefusal(limits, url, req.rawHeaders);
      const requestId = nextId();
      inFlight.set(req.socket, res);
      const aborted = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) aborted.abort();
        if (inFlight.get(req.socket) === res) inFlight.delete(req.socket);
      });
      let response: StageResponse;
      if (overLimit) {
        response = refusal(overLimit.code, overLimit.message, req.headers);
      } else if (!url.startsWith('/')) {
        response = refusal('invalidRequest', 'The request target must be a path (origin-form) or an absolute URL.', req.headers);
      } else {
        try {
          response = await runStages(stages, {
            method: req.method ?? 'GET',
            url,
            headers: req.headers,
            rawHeaders: req.rawHeaders,
            body: req,
            requestId,
            remoteAddress: clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted),
            localAddress: req.socket.localAddress,
            signal: aborted.signal,
            connection: new SocketControl(req, log, requestId, timers),
          });
        } catch (error) {
          if (aborted.signal.aborted || req.destroyed) {
            response = { status: 499 };
          } else {
            log.error({ err: error, requestId }, 'request failed');
            response = options.renderError(portolanError('internal'), req);
          }
        }
      }
      // How the answer ended when it did not end whole: the client went away, or its streamed body failed.
      let cut: 'client' | 'answer' | undefined;
      if (res.destroyed || aborted.signal.aborted) {
        destroyBody(response);
        response = { ...response, status: 499 };
        cut = 'client';
      } else {
        try {
          const ended = await answer(req, res, response, requestId);
          if (ended !== 'whole') cut = ended;
        } catch (error) {
          // An answer node:http refuses to write (an invalid header or status from a handler): a 500, the process stays up.
          log.error({ err: error, requestId, operationId: response.operationId }, 'answer could not be written');
          destroyBody(response);
          if (res.headersSent) res.destroy();
          else await answer(req, res, options.renderError(portolanError('internal'), req), requestId);
          response = { ...response, status: 500 };
        }
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (response.aside === 'silent') return;
      if (!response.aside) options.metrics.observe(options.role, response.operationId, response.status, ms / 1000);
      // A health probe that finds the role healthy is routine (monitors ask every few seconds): debug, not info.
      const routine = response.aside === 'debug' || (response.operationId === 'getHealth' && response.status === 200);
      const level = routine ? 'debug' : 'info';
      if (!accessLog.enabled(level)) return;
      accessLog.write(level, {
        requestId,
        method: req.method,
        path: url,
        operationId: response.operationId,
        status: response.status,
        ms: Math.round(ms * 100) / 100,
        extra: cut ? { ...response.log, cut } : response.log,
      });
    },
  );

  /**
   * Writes a stage's answer. A small body nobody read (a 401 or 415 to a short POST) is dropped first, so
   * the connection can be kept; a large one is not waited for: the answer goes out at once and the
   * connection closes (the writer lingers for the rest of it).
   */
  async function answer(req: IncomingMessage, res: ServerResponse, response: StageResponse, requestId: string) {
    if (!req.complete && untouched(req) && Number(req.headers['content-length'] ?? Infinity) <= SMALL_BODY)
      await drainWithin(req, linger.timers, linger.lingerMs);
    return writeAnswer(req, res, wireAnswer(response, requestId), linger);
  }

  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.maxHeadersCount = PARSER_HEADERS_COUNT;
  server.maxConnections = limits.maxConnections;

  /**
   * An answer of the adapter's own, in the role's shape, closing the connection (`headers` when the
   * request head was read: an interface that negotiates its format, C, answers in the asked one).
   */
  function refusal(code: ErrorCode, message: string, headers: IncomingMessage['headers'] = {}): StageResponse {
    const rendered = options.renderError(portolanError(code, message), { headers });
    return { ...rendered, headers: { ...rendered.headers, connection: 'close' } };
  }

  /** Writes a refusal straight to a socket no response object owns yet (parser errors, timeouts). */
  function refuseOnSocket(socket: Duplex, code: ErrorCode, message: string) {
    const pending = inFlight.get(socket);
    if (pending?.headersSent || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, headers, body, contentType } = refusal(code, message);
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
      `Content-Type: ${contentType ?? 'application/json'}`,
      `Content-Length: ${Buffer.byteLength(payload)}`,
    ];
    for (const [name, value] of Object.entries(headers ?? {})) head.push(`${canonicalHeaderName(name)}: ${[value].flat().join(', ')}`);
    socket.end(`${head.join('\r\n')}\r\n\r\n${payload}`);
    pending?.destroy();
  }

  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number }, socket: Duplex) => {
    const { code, message } =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? overflowRefusal(limits, error.rawPacket, error.bytesParsed)
        : (CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED);
    refuseOnSocket(socket, code, message);
  });
  // A connection a stage set an idle limit on (the gateway's registration session) and that went quiet.
  server.on('timeout', (socket: Duplex) => {
    if (inFlight.has(socket)) refuseOnSocket(socket, 'requestTimeout', 'The connection sent nothing within the idle time limit.');
    else socket.destroy();
  });

  return { server, listen: (port, host) => listenOn(server, port, host), close: (timeoutMs) => closeServer(server, timeoutMs) };
}

/** Socket controls for stages (the gateway's registration bounds its connection); one object per request, methods shared. */
class SocketControl implements ConnectionControl {
  private readonly req: IncomingMessage;
  private readonly log: Logger;
  private readonly requestId: string;
  private readonly timers: Timers;

  constructor(req: IncomingMessage, log: Logger, requestId: string, timers: Timers) {
    this.req = req;
    this.log = log;
    this.requestId = requestId;
    this.timers = timers;
  }

  setIdleTimeout(ms: number): void {
    this.req.socket.setTimeout(ms);
  }

  closeAfter(ms: number, reason: string): void {
    const socket = this.req.socket;
    const cancel = this.timers.after(
      ms,
      () => {
        this.log.warn({ requestId: this.requestId }, reason);
        socket.destroy();
      },
      { background: true },
    );
    socket.once('close', cancel);
  }
}

/** Whether no stage started reading the request body (a stage that streams it is not waited on). */
const untouched = (req: IncomingMessage) =>
  !req.readableDidRead && req.readableFlowing === null && req.listenerCount('readable') === 0 && req.listenerCount('data') === 0;

/** A request body up to this size that an early answer left unread is read and dropped, keeping the connection. */
const SMALL_BODY = 64 * 1024;

/** The request target as a path: an absolute-form target (`http://host/path`) is reduced to its path and query. */
function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  const match = /^https?:\/\/[^/?#]*(.*)$/i.exec(target);
  if (!match) return target;
  return match[1] === '' || match[1]!.startsWith('?') ? `/${match[1]}` : match[1]!;
}

/** Gives up a streamed or relayed body that will not be written (its source is cut). */
function destroyBody(response: StageResponse): void {
  if (response.body instanceof Readable || isRelayedBody(response.body)) response.body.destroy();
}

/** The bytes of a non-streamed body: bytes and text as they are, anything else as JSON. */
function payloadOf(response: HandlerResponse): string | Buffer | undefined {
  const body = response.body;
  if (body === undefined || body === null) return undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string' && response.contentType && !response.contentType.includes('json')) return body;
  return JSON.stringify(body);
}

/**
 * A stage's answer as the writer takes it. A passed-on answer keeps its fields as received and its reason
 * phrase (an empty one gets the standard phrase); any other gets the request id, and its media type and
 * length when it has a body.
 */
function wireAnswer(response: StageResponse, requestId: string): WireAnswer {
  const body = response.body instanceof Readable || isRelayedBody(response.body) ? response.body : payloadOf(response);
  if (response.rawHeaders) {
    return {
      status: response.status,
      ...(response.statusText ? { statusText: response.statusText } : {}),
      headers: response.rawHeaders,
      body,
    };
  }
  const headers: Record<string, string | readonly string[]> = { 'x-request-id': requestId, ...response.headers };
  if (body instanceof Readable || isRelayedBody(body)) {
    headers['content-type'] ??= response.contentType ?? 'application/octet-stream';
  } else if (body !== undefined) {
    headers['content-type'] = response.contentType ?? (Buffer.isBuffer(response.body) ? 'application/octet-stream' : 'application/json');
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return { status: response.status, headers, body };
}
