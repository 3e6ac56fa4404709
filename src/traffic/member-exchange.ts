import { pipeline, Transform, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Cancel, Timers } from '../lib/timers.ts';
import { upstreamHeaders } from './forward-headers.ts';
import { endToEndHeaders } from './hop-by-hop.ts';
import { upstreamFailure, type ProxyErrorCode } from './upstream-failure.ts';

export type { ProxyErrorCode } from './upstream-failure.ts';

/** One request to pass on, as any HTTP server received it. */
export type ProxyRequest = {
  method: string;
  /** The request target in origin-form (the adapter reduces an absolute-form target to its path). */
  url: string;
  /** The client's header fields as a flat list (`[name, value, ...]`, node:http's `rawHeaders`). */
  rawHeaders: readonly string[];
  /** Appended to X-Forwarded-For. */
  clientAddress?: string;
  /**
   * The request body as it arrives, or null. It is read only as fast as the member reads, and never
   * destroyed: once the member stops reading (its answer is complete, or it failed), the exchange
   * stops reading too and leaves the rest to the caller, who owns the client connection.
   */
  body: Readable | null;
  /** Aborted when the client has gone away: the exchange is given up. */
  signal?: AbortSignal;
};

/** How an exchange ended; only `answer` has anything to send to the client. */
export type ProxyAnswer =
  /**
   * The member's answer: status, reason and end-to-end header fields (hop-by-hop ones removed), and
   * its body as a stream that errors when the member fails or stalls mid-answer. Destroying `body`
   * cuts the exchange with the member.
   */
  | { kind: 'answer'; member: string; status: number; statusText: string; headers: string[]; body: Readable }
  /**
   * No answer: the gateway answers 502 or 504 with `message` (a member and a cause, never request details).
   * `loop`: the request was not sent at all, it had been through this proxy before (hop-marker.ts).
   */
  | { kind: 'failed'; member?: string; code: ProxyErrorCode; message: string; loop?: true }
  /** The client went away before the answer started. */
  | { kind: 'cancelled'; member: string };

export type ExchangeLimits = {
  /** The member must make progress within this time: answer headers, read request body, send answer body. */
  timeoutMs: number;
  timers: Timers;
  /** This proxy's `Via` entry, appended to the request's (hop-marker.ts). */
  via?: string;
};

/**
 * Sends one request to one member over `upstream` (undici, keep-alive) and resolves as soon as the
 * member's response headers arrive, even if the request body is still being sent: a member may
 * answer early (413, 401) without reading the body, and that answer must reach the client at once.
 *
 * @example
 * const answer = await exchangeWithMember(upstream, '127.0.0.1:8081', request, { timeoutMs: 30_000, timers: systemTimers });
 * if (answer.kind === 'answer') answer.body.pipe(res);
 */
export async function exchangeWithMember(
  upstream: Pick<Dispatcher, 'request'>,
  member: string,
  request: ProxyRequest,
  limits: ExchangeLimits,
): Promise<ProxyAnswer> {
  const { timeoutMs, timers } = limits;
  if (request.signal?.aborted) return { kind: 'cancelled', member };
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new Error('client closed the connection'));
  request.signal?.addEventListener('abort', onClientGone, { once: true });

  let timedOut = false;
  let answerBody: Transform | undefined;
  const watchdog = createWatchdog(timers, timeoutMs, () => {
    if (!answerBody) {
      timedOut = true;
      abort.abort(new Error(`no answer within ${timeoutMs} ms`));
      return 'stop';
    }
    // The client reads slower than the member sends (or not yet): the pause is not the member's.
    if (answerBody.readableFlowing !== true || answerBody.readableLength > 0) return 'wait';
    answerBody.destroy(new Error(`pool member ${member} sent nothing for ${timeoutMs} ms mid-answer`));
    return 'stop';
  });
  const feed = request.body ? feedFrom(request.body, watchdog.kick) : undefined;

  let response: Dispatcher.ResponseData;
  try {
    response = await upstream.request({
      method: request.method as Dispatcher.HttpMethod,
      path: request.url,
      headers: upstreamHeaders(request.rawHeaders, request.clientAddress, limits.via),
      body: feed?.stream ?? null,
      signal: abort.signal,
      responseHeaders: 'raw',
    });
  } catch (error) {
    watchdog.stop();
    feed?.stop();
    if (request.signal?.aborted || feed?.cut) return { kind: 'cancelled', member };
    if (timedOut)
      return { kind: 'failed', member, code: 'gatewayTimeout', message: `pool member ${member} did not answer within ${timeoutMs} ms` };
    return { kind: 'failed', member, ...upstreamFailure(error, member, timeoutMs) };
  } finally {
    // From here on the consumer cuts the exchange by destroying the answer's body.
    request.signal?.removeEventListener('abort', onClientGone);
  }

  const finish = () => {
    watchdog.stop();
    // The member has sent its whole answer (or failed): it reads no more of the request body (undici
    // closes a connection whose request is still being sent), so nothing more is taken from the client.
    feed?.stop();
  };
  answerBody = new Transform({
    transform(chunk, _encoding, done) {
      watchdog.kick();
      done(null, chunk);
    },
    flush(done) {
      finish();
      done();
    },
  });
  watchdog.kick();
  pipeline(response.body, answerBody, finish);
  return {
    kind: 'answer',
    member,
    status: response.statusCode,
    statusText: response.statusText,
    headers: endToEndHeaders(response.headers as unknown as string[]),
    body: answerBody,
  };
}

/**
 * The request body as undici's source: a stream of our own between the client's body and undici, so
 * that undici ending or destroying it (the member answered, the connection failed) never destroys the
 * client's stream, which would cut the client's connection before it got the answer.
 */
function feedFrom(source: Readable, onProgress: () => void) {
  const stream = new Transform({
    transform(chunk, _encoding, done) {
      onProgress();
      // Passed on after this turn's I/O has been read (setImmediate runs after the poll phase): a member
      // that answered early and closed its connection has then been heard before a write to that closed
      // connection fails (EPIPE) and takes its unread answer with it, so the client gets the answer, not a 502.
      setImmediate(done, null, chunk);
    },
  });
  const feed = {
    stream,
    /** The client stopped sending before the body's end (it went away). */
    cut: false,
    stop() {
      source.off('close', onSourceClose);
      source.unpipe(stream);
      stream.destroy();
    },
  };
  const onSourceClose = () => {
    if (source.readableEnded) return;
    feed.cut = true;
    stream.destroy(new Error('the client stopped sending the request body'));
  };
  source.once('close', onSourceClose);
  source.pipe(stream);
  return feed;
}

/**
 * Calls `onIdle` once `ms` pass without a `kick()`; `onIdle` says whether to keep watching ('wait':
 * the pause is not the member's) or not ('stop').
 */
function createWatchdog(timers: Timers, ms: number, onIdle: () => 'wait' | 'stop') {
  let cancel: Cancel | undefined;
  let stopped = false;
  const arm = () => {
    cancel?.();
    if (stopped) return;
    cancel = timers.after(ms, () => {
      cancel = undefined;
      if (onIdle() === 'wait') arm();
      else stopped = true;
    });
  };
  arm();
  return {
    kick: arm,
    stop() {
      stopped = true;
      cancel?.();
    },
  };
}
