import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool as UpstreamPool } from 'undici';
import type { Logger } from '../../lib/logger.ts';
import type { HandlerResponse } from '../../server/handler-types.ts';
import { writeResponse } from '../../server/http-adapter.ts';
import { endToEndHeaders } from './hop-by-hop.ts';
import type { Member, Pool } from './pool.ts';
import { upstreamFailure } from './upstream-failure.ts';

export type ProxyErrorCode = 'badGateway' | 'gatewayTimeout';

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
  /** No response headers this long after the request was sent (or no connection this long): 504. */
  upstreamTimeoutMs: number;
  /** Keep-alive connections held open to each member at most. */
  connectionsPerMember: number;
  logger: Logger;
};

export type Proxy = {
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
 * The headers the member receives: the client's end-to-end fields unchanged (Host included: the
 * member sees the name the client asked for), without Expect (node:http has already answered
 * `100 Continue`), and `X-Forwarded-For` with the client's address appended.
 */
function upstreamHeaders(req: IncomingMessage): string[] {
  const headers: string[] = [];
  const forwardedFor: string[] = [];
  const seen = new Set<string>();
  const fields = endToEndHeaders(req.rawHeaders);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    const value = fields[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'x-forwarded-for') forwardedFor.push(value);
    else if (lower === 'expect') continue;
    // node:http keeps a repeated Host or Content-Length in rawHeaders; the first is the one it used.
    else if ((lower === 'host' || lower === 'content-length') && seen.has(lower)) continue;
    else {
      seen.add(lower);
      headers.push(name, value);
    }
  }
  const client = req.socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (client) forwardedFor.push(client);
  if (forwardedFor.length > 0) headers.push('X-Forwarded-For', forwardedFor.join(', '));
  return headers;
}

/** The request target as a path: absolute-form (`GET http://host/path`) is reduced to its path. */
function pathOf(url: string | undefined): string {
  if (!url) return '/';
  if (url.startsWith('/')) return url;
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/**
 * The gateway's reverse proxy: one keep-alive connection pool (undici) per member; request and
 * response bodies are streamed, never held; status, headers and body pass unchanged but for the
 * hop-by-hop fields (both ways) and X-Forwarded-For. Failures before the answer starts become the
 * gateway's 502/504; after it started, the client connection is cut.
 *
 * @example
 * const proxy = createProxy({ pool, upstreamTimeoutMs: 30_000, connectionsPerMember: 64, logger });
 * http.createServer((req, res) => proxy.forward(req, res, { requestId, renderError }));
 */
export function createProxy(options: ProxyOptions): Proxy {
  const { pool, upstreamTimeoutMs, logger } = options;
  const upstreams = new Map<string, UpstreamPool>();
  const upstreamFor = (member: Member) => {
    let upstream = upstreams.get(member.address);
    if (!upstream) {
      upstream = new UpstreamPool(`http://${member.address}`, {
        connections: options.connectionsPerMember,
        connectTimeout: upstreamTimeoutMs,
        headersTimeout: upstreamTimeoutMs,
        // Between two chunks of the response body: a member that stalls mid-body is cut off too.
        bodyTimeout: upstreamTimeoutMs,
        allowH2: false,
      });
      upstreams.set(member.address, upstream);
    }
    return upstream;
  };

  async function forward(req: IncomingMessage, res: ServerResponse, context: ForwardContext): Promise<ForwardResult> {
    const answerError = (code: ProxyErrorCode, message: string, member?: string): ForwardResult => {
      const rendered = context.renderError(code, message);
      logger.warn({ requestId: context.requestId, pool: pool.name, member, status: rendered.status, reason: message }, 'request not passed on');
      if (!res.headersSent && !res.destroyed) writeResponse(res, rendered, context.requestId);
      return { status: rendered.status, ...(member ? { member } : {}) };
    };

    const member = pool.pick();
    if (!member) return answerError('badGateway', `no member of pool ${pool.name} is up`);

    const upstreamAbort = new AbortController();
    const clientGone = () => upstreamAbort.signal.aborted || res.destroyed || (req.destroyed && !req.complete);
    // Which side cut the exchange first; the other side's failure follows from it.
    let cutBy: 'client' | 'upstream' | undefined;
    const onClose = () => {
      if (res.writableFinished) return;
      cutBy ??= 'client';
      upstreamAbort.abort(new Error('client closed the connection'));
    };
    res.once('close', onClose);
    try {
      const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
      let response;
      try {
        response = await upstreamFor(member).request({
          method: (req.method ?? 'GET') as 'GET',
          path: pathOf(req.url),
          headers: upstreamHeaders(req),
          body: hasBody ? req : null,
          signal: upstreamAbort.signal,
          responseHeaders: 'raw',
        });
      } catch (error) {
        if (clientGone()) return { status: CLIENT_CLOSED, member: member.address, aborted: 'client' };
        const failure = upstreamFailure(error, member.address, upstreamTimeoutMs);
        return answerError(failure.code, failure.message, member.address);
      }

      const { statusCode, statusText, body } = response;
      body.once('error', () => (cutBy ??= 'upstream'));
      try {
        const headers = endToEndHeaders(response.headers as unknown as string[]);
        res.writeHead(statusCode, SAFE_REASON.test(statusText) ? statusText : undefined, headers);
      } catch (error) {
        // A field node:http refuses to write (not valid HTTP): the member's answer cannot be passed on.
        body.destroy();
        return answerError('badGateway', `pool member ${member.address} sent an answer that cannot be passed on (${(error as NodeJS.ErrnoException).code ?? 'invalid header'})`, member.address);
      }
      try {
        await pipeline(body, res);
        return { status: statusCode, member: member.address };
      } catch (error) {
        // The answer has started: the only way to tell the client it is incomplete is to cut the connection.
        res.destroy();
        const by = cutBy ?? 'upstream';
        if (by === 'upstream') {
          logger.warn({ requestId: context.requestId, pool: pool.name, member: member.address, reason: (error as Error).message }, 'member failed mid-answer; client connection cut');
        }
        return { status: statusCode, member: member.address, aborted: by };
      }
    } catch (error) {
      // A bug, not an expected failure: keep the process up and the client answered.
      logger.error({ requestId: context.requestId, err: error }, 'proxy failure');
      if (res.headersSent) res.destroy();
      return answerError('badGateway', `pool member ${member.address} could not be reached`, member.address);
    } finally {
      res.off('close', onClose);
    }
  }

  return {
    forward,
    async close() {
      await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
      upstreams.clear();
    },
  };
}
