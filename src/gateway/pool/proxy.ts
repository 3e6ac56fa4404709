import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Pool as UpstreamPool } from 'undici';
import type { Logger } from '../../lib/logger.ts';
import { systemTimers, type Timers } from '../../lib/timers.ts';
import { drainWithin } from '../../lib/drain.ts';
import type { HandlerResponse } from '../../server/handler-types.ts';
import { writeResponse } from '../../server/http-adapter.ts';
import { exchangeWithMember, type ProxyAnswer, type ProxyErrorCode, type ProxyRequest } from './member-exchange.ts';
import type { Member, Pool } from './pool.ts';

export type { ProxyAnswer, ProxyErrorCode, ProxyRequest } from './member-exchange.ts';

export type ForwardContext = {
  requestId: string;
  /** The gateway's error answer (`{error, error-message}`) for a 502 or 504. */
  renderError(code: ProxyErrorCode, message: string): HandlerResponse;
};

export type ForwardResult = {
  /** The status sent to the client (the member's, or the gateway's 502/504); 499 when the client went away first. */
  status: number;
  /** `host:port` of the member the request went to. */
  member?: string;
  /** Set when the exchange was cut: by the client going away, or by the member failing mid-body. */
  aborted?: 'client' | 'upstream';
};

export type ProxyOptions = {
  pool: Pool;
  /**
   * A member must make progress within this time, or the gateway gives up on it: no response headers
   * this long after the request (or after the last request-body bytes it read): 504; nothing this
   * long in the middle of its answer while the client is ready for more: the client connection is cut.
   */
  upstreamTimeoutMs: number;
  /** Keep-alive connections held open to each member at most. */
  connectionsPerMember: number;
  logger: Logger;
  /** Where the upstream timeout and the linger time come from (default: real timers). */
  timers?: Timers;
  /**
   * After a member answered before the request body was all sent (413, 401), how long the client may
   * go on sending that body (read and dropped) before its connection is closed (default 5000 ms).
   */
  lingerMs?: number;
};

export type Proxy = {
  /**
   * Passes one request to a member of the pool and resolves with its answer (headers, streamed body)
   * or why there is none, writing nothing: for an adapter that writes answers itself.
   */
  exchange(request: ProxyRequest): Promise<ProxyAnswer>;
  /** Passes one request to a member of the pool and streams the answer back. Never rejects. */
  forward(req: IncomingMessage, res: ServerResponse, context: ForwardContext): Promise<ForwardResult>;
  /** Closes the connections to every member once their requests are done. */
  close(): Promise<void>;
};

/** nginx's convention for "the client closed the request before the answer": logs tell it from a 5xx. */
const CLIENT_CLOSED = 499;
/** A reason phrase node:http accepts as is; any other is replaced by the standard one. */
const SAFE_REASON = /^[\t\x20-\x7e]*$/;

/**
 * The gateway's reverse proxy: one keep-alive connection pool (undici) per member; request and
 * response bodies are streamed, never held; status, headers and body pass unchanged but for the
 * hop-by-hop fields (both ways) and X-Forwarded-For. Failures before the answer starts become the
 * gateway's 502/504; after it started, the client connection is cut. A member's answer that comes
 * before the request body was all sent is passed on at once, with `Connection: close`.
 *
 * @example
 * const proxy = createProxy({ pool, upstreamTimeoutMs: 30_000, connectionsPerMember: 64, logger });
 * http.createServer((req, res) => proxy.forward(req, res, { requestId, renderError }));
 */
export function createProxy(options: ProxyOptions): Proxy {
  const { pool, upstreamTimeoutMs, logger } = options;
  const timers = options.timers ?? systemTimers;
  const lingerMs = options.lingerMs ?? 5000;
  const upstreams = new Map<string, UpstreamPool>();
  const upstreamFor = (member: Member) => {
    let upstream = upstreams.get(member.address);
    if (!upstream) {
      upstream = new UpstreamPool(`http://${member.address}`, {
        connections: options.connectionsPerMember,
        // The exchange's own timer (on `timers`) bounds connecting too; this only bounds how long a
        // connection attempt outlives a request given up on.
        connectTimeout: upstreamTimeoutMs,
        // Off: the exchange times the member with `timers`, which tests can move.
        headersTimeout: 0,
        bodyTimeout: 0,
        allowH2: false,
      });
      upstreams.set(member.address, upstream);
    }
    return upstream;
  };

  function exchange(request: ProxyRequest): Promise<ProxyAnswer> {
    const member = pool.pick();
    if (!member) return Promise.resolve({ kind: 'failed', code: 'badGateway', message: `no member of pool ${pool.name} is up` });
    return exchangeWithMember(upstreamFor(member), member.address, request, { timeoutMs: upstreamTimeoutMs, timers });
  }

  async function forward(req: IncomingMessage, res: ServerResponse, context: ForwardContext): Promise<ForwardResult> {
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    // The client is still sending a body nobody will read to its end: its connection cannot be reused.
    const bodyUnread = () => hasBody && !req.complete;

    const answerError = (code: ProxyErrorCode, message: string, member?: string): ForwardResult => {
      const rendered = context.renderError(code, message);
      logger.warn({ requestId: context.requestId, pool: pool.name, member, status: rendered.status, reason: message }, 'request not passed on');
      if (!res.headersSent && !res.destroyed) {
        writeResponse(res, bodyUnread() ? lingering(rendered, drainWithin(req, timers, lingerMs)) : rendered, context.requestId);
      }
      dropRest(req);
      return { status: rendered.status, ...(member ? { member } : {}) };
    };

    const clientGone = new AbortController();
    // Which side cut the exchange first; the other side's failure follows from it.
    let cutBy: 'client' | 'upstream' | undefined;
    const onClose = () => {
      if (res.writableFinished) return;
      cutBy ??= 'client';
      clientGone.abort();
    };
    res.once('close', onClose);
    let member: string | undefined;
    try {
      const answer = await exchange({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        rawHeaders: req.rawHeaders,
        clientAddress: req.socket.remoteAddress,
        body: hasBody ? req : null,
        signal: clientGone.signal,
      });
      member = answer.member;
      if (answer.kind === 'cancelled') return { status: CLIENT_CLOSED, member: answer.member, aborted: 'client' };
      if (answer.kind === 'failed') return answerError(answer.code, answer.message, answer.member);

      const { status, body } = answer;
      body.once('error', () => (cutBy ??= 'upstream'));
      try {
        const headers = bodyUnread() ? [...answer.headers, 'Connection', 'close'] : answer.headers;
        res.writeHead(status, SAFE_REASON.test(answer.statusText) ? answer.statusText : undefined, headers);
      } catch (error) {
        // A field node:http refuses to write (not valid HTTP): the member's answer cannot be passed on.
        body.destroy();
        return answerError('badGateway', `pool member ${answer.member} sent an answer that cannot be passed on (${(error as NodeJS.ErrnoException).code ?? 'invalid header'})`, answer.member);
      }
      try {
        await pipeline(body, res, { end: false });
      } catch (error) {
        // The answer has started: the only way to tell the client it is incomplete is to cut the connection.
        res.destroy();
        const by = cutBy ?? 'upstream';
        if (by === 'upstream') {
          logger.warn({ requestId: context.requestId, pool: pool.name, member: answer.member, reason: (error as Error).message }, 'member failed mid-answer; client connection cut');
        }
        return { status, member: answer.member, aborted: by };
      }
      if (bodyUnread()) await drainWithin(req, timers, lingerMs);
      else dropRest(req);
      res.end();
      return { status, member: answer.member };
    } catch (error) {
      // A bug, not an expected failure: keep the process up and the client answered.
      logger.error({ requestId: context.requestId, err: error }, 'proxy failure');
      if (res.headersSent) res.destroy();
      return answerError('badGateway', `pool member ${member ?? 'of the pool'} could not be reached`, member);
    } finally {
      res.off('close', onClose);
    }
  }

  return {
    exchange,
    forward,
    async close() {
      await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
      upstreams.clear();
    },
  };
}

/**
 * The gateway's own (JSON) answer to a client still sending its body: all of it written at once, with
 * its length, so the client has it whole; the stream ends, and node closes the connection, only once
 * `bodyDone` (the client has sent the rest, or the linger time passed).
 */
function lingering(rendered: HandlerResponse, bodyDone: Promise<void>): HandlerResponse {
  const payload = Buffer.from(JSON.stringify(rendered.body));
  const body = new PassThrough();
  body.write(payload);
  void bodyDone.then(() => body.end());
  return {
    ...rendered,
    contentType: rendered.contentType ?? 'application/json',
    headers: { ...rendered.headers, connection: 'close', 'content-length': String(payload.length) },
    body,
  };
}

/**
 * Drops what is left of a request body (received but not passed on): node reads the next request on
 * a keep-alive connection only once this one's body has been read.
 */
function dropRest(req: IncomingMessage) {
  if (!req.readableEnded) req.resume();
}
