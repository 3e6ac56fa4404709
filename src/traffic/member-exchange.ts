import { Transform, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { RelayedBody, type RelayOutcome, type RelaySink } from '../lib/relayed-body.ts';
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
   * The member's answer: status, reason and end-to-end header fields (hop-by-hop ones removed), and its
   * body, relayed into the client's response as it arrives (src/lib/relayed-body.ts); the relay ends
   * `answer` when the member fails or stalls mid-answer. Destroying `body` cuts the exchange with the member.
   */
  | { kind: 'answer'; member: string; status: number; statusText: string; headers: string[]; body: RelayedBody }
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
  /** Milliseconds on the same clock as `timers` (a fake clock in tests): when the member last made progress. */
  now: () => number;
  /** This proxy's `Via` entry, appended to the request's (hop-marker.ts). */
  via?: string;
};

/**
 * Sends one request to one member over `upstream` (undici's dispatcher, keep-alive) and resolves as soon as
 * the member's response headers arrive, even if the request body is still being sent: a member may answer
 * early (413, 401) without reading the body, and that answer must reach the client at once. The answer's
 * body is then written straight into the client's response (`body.relay(res)`), no stream in between.
 *
 * @example
 * const answer = await exchangeWithMember(upstream, '127.0.0.1:8081', request, { timeoutMs: 30_000, timers: systemTimers, now: Date.now });
 * if (answer.kind === 'answer') await answer.body.relay(res);
 */
export function exchangeWithMember(
  upstream: Pick<Dispatcher, 'dispatch'>,
  member: string,
  request: ProxyRequest,
  limits: ExchangeLimits,
): Promise<ProxyAnswer> {
  if (request.signal?.aborted) return Promise.resolve({ kind: 'cancelled', member });
  return new Promise((settle) => new MemberExchange(member, request, limits, settle).start(upstream));
}

/** Answer bytes held before the relay starts (the stage's answer is on its way to the writer); past it the member is paused. */
const HELD_BYTES = 64 * 1024;

/**
 * One exchange as undici's dispatch handler, and the answer's relayed body. Per request: one object, one
 * timer (re-armed only when it fires early), no stream, no AbortController; progress is a timestamp.
 */
class MemberExchange extends RelayedBody implements Dispatcher.DispatchHandler {
  private state: 'waiting' | 'answering' | 'ended' | 'failed' = 'waiting';
  private controller: Dispatcher.DispatchController | undefined;
  /** A reason to abort with, set before undici handed over its controller (the request still queued). */
  private abortReason: Error | undefined;
  private feed: Feed | undefined;
  private lastProgress: number;
  private cancelTimer: Cancel | undefined;
  private timedOut = false;
  private clientGone = false;
  private held: Buffer[] | undefined;
  private heldBytes = 0;
  private sink: RelaySink | undefined;
  private waitingForDrain = false;
  private endRelay: ((outcome: RelayOutcome) => void) | undefined;
  private outcome: RelayOutcome | undefined;
  failure: Error | undefined;

  private readonly member: string;
  private readonly request: ProxyRequest;
  private readonly limits: ExchangeLimits;
  private settle: ((answer: ProxyAnswer) => void) | undefined;

  constructor(member: string, request: ProxyRequest, limits: ExchangeLimits, settle: (answer: ProxyAnswer) => void) {
    super();
    this.member = member;
    this.request = request;
    this.limits = limits;
    this.settle = settle;
    this.lastProgress = limits.now();
  }

  start(upstream: Pick<Dispatcher, 'dispatch'>): void {
    const { request, limits } = this;
    this.cancelTimer = limits.timers.after(limits.timeoutMs, this.onTimer);
    request.signal?.addEventListener('abort', this.onClientGone, { once: true });
    if (request.body) this.feed = feedFrom(request.body, this.onProgress);
    try {
      upstream.dispatch(
        {
          method: request.method as Dispatcher.HttpMethod,
          path: request.url,
          headers: upstreamHeaders(request.rawHeaders, request.clientAddress, limits.via),
          body: this.feed?.stream ?? null,
        },
        this,
      );
    } catch (error) {
      this.onResponseError(undefined, error as Error);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, _headers: unknown, statusText?: string): void {
    // 1xx: informational, not passed on (the server in front answers 100 Continue itself).
    if (statusCode < 200 || this.state !== 'waiting') return;
    this.state = 'answering';
    this.lastProgress = this.limits.now();
    // From here on the consumer cuts the exchange by destroying the answer's body.
    this.request.signal?.removeEventListener('abort', this.onClientGone);
    this.settleWith({
      kind: 'answer',
      member: this.member,
      status: statusCode,
      statusText: statusText ?? '',
      headers: endToEndHeaders(latin1Fields(controller.rawHeaders)),
      body: this,
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.lastProgress = this.limits.now();
    const sink = this.sink;
    if (sink) {
      if (!sink.write(chunk)) this.awaitDrain(controller, sink);
      return;
    }
    (this.held ??= []).push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes >= HELD_BYTES) controller.pause();
  }

  onResponseEnd(): void {
    this.state = 'ended';
    this.finish('whole');
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    const { member, limits } = this;
    if (this.state === 'waiting') {
      this.state = 'failed';
      if (this.clientGone || this.feed?.cut) this.settleWith({ kind: 'cancelled', member });
      else if (this.timedOut)
        this.settleWith({
          kind: 'failed',
          member,
          code: 'gatewayTimeout',
          message: `pool member ${member} did not answer within ${limits.timeoutMs} ms`,
        });
      else this.settleWith({ kind: 'failed', member, ...upstreamFailure(error, member, limits.timeoutMs) });
      this.finish(undefined);
      return;
    }
    if (this.state !== 'answering') return;
    this.state = 'failed';
    this.failure ??= error;
    this.finish(this.clientGone ? 'client' : 'answer');
  }

  relay(sink: RelaySink): Promise<RelayOutcome> {
    if (this.sink) throw new Error('an answer body is relayed once');
    if (sink.destroyed) {
      // The client went away before the relay began (its 'close' has been and gone): nothing is written.
      this.held = undefined;
      if (this.state === 'answering') {
        this.clientGone = true;
        this.abort(new Error('client closed the connection'));
      }
      return Promise.resolve('client');
    }
    this.sink = sink;
    let ready = true;
    const held = this.held;
    this.held = undefined;
    if (held) for (const chunk of held) ready = sink.write(chunk) && ready;
    if (this.outcome) return Promise.resolve(this.outcome);
    return new Promise((resolve) => {
      this.endRelay = resolve;
      sink.once('close', this.onSinkClose);
      const controller = this.controller!;
      if (!ready) this.awaitDrain(controller, sink);
      else if (controller.paused) {
        // Paused while nobody relayed: the member's time starts again now.
        this.lastProgress = this.limits.now();
        controller.resume();
      }
    });
  }

  destroy(reason?: Error): void {
    if (this.state === 'ended' || this.state === 'failed') return;
    this.abort(reason ?? new Error('the answer was not passed on'));
  }

  private settleWith(answer: ProxyAnswer) {
    const settle = this.settle;
    this.settle = undefined;
    settle?.(answer);
  }

  private abort(reason: Error) {
    if (this.controller) this.controller.abort(reason);
    else {
      // Still queued for a connection: undici aborts it once it hands over the controller.
      this.abortReason = reason;
      if (this.state === 'waiting') this.onResponseError(undefined, reason);
    }
  }

  /** The exchange is over (`outcome`: how its relay ended; undefined when no answer started). */
  private finish(outcome: RelayOutcome | undefined) {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    // The member has sent its whole answer (or failed): it reads no more of the request body (undici closes
    // a connection whose request is still being sent), so nothing more is taken from the client.
    this.feed?.stop();
    this.request.signal?.removeEventListener('abort', this.onClientGone);
    if (outcome === undefined) return;
    const sink = this.sink;
    if (sink) {
      sink.off('close', this.onSinkClose);
      sink.off('drain', this.onDrain);
    }
    const endRelay = this.endRelay;
    this.endRelay = undefined;
    if (endRelay) endRelay(outcome);
    else this.outcome = outcome;
  }

  private awaitDrain(controller: Dispatcher.DispatchController, sink: RelaySink) {
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    controller.pause();
    sink.once('drain', this.onDrain);
  }

  private readonly onDrain = () => {
    this.waitingForDrain = false;
    // The reader is ready again: the member's time starts now.
    this.lastProgress = this.limits.now();
    this.controller?.resume();
  };

  private readonly onProgress = () => {
    this.lastProgress = this.limits.now();
  };

  private readonly onClientGone = () => {
    this.clientGone = true;
    this.abort(new Error('client closed the connection'));
  };

  private readonly onSinkClose = () => {
    if (this.state !== 'answering') return;
    this.clientGone = true;
    this.abort(new Error('client closed the connection'));
  };

  /** Fires `timeoutMs` after the last check; the member is given up on only if it made no progress since. */
  private readonly onTimer = () => {
    this.cancelTimer = undefined;
    const { limits, member } = this;
    if (this.state !== 'waiting' && this.state !== 'answering') return;
    const now = limits.now();
    if (this.state === 'answering' && (!this.sink || this.waitingForDrain)) {
      // The client reads slower than the member sends (or not yet): the pause is not the member's.
      this.lastProgress = now;
      this.cancelTimer = limits.timers.after(limits.timeoutMs, this.onTimer);
      return;
    }
    const remaining = this.lastProgress + limits.timeoutMs - now;
    if (remaining > 0) {
      this.cancelTimer = limits.timers.after(remaining, this.onTimer);
      return;
    }
    if (this.state === 'waiting') {
      this.timedOut = true;
      this.abort(new Error(`no answer within ${limits.timeoutMs} ms`));
    } else {
      this.failure = new Error(`pool member ${member} sent nothing for ${limits.timeoutMs} ms mid-answer`);
      this.abort(this.failure);
    }
  };
}

/** undici's raw response fields as text (names and values as bytes, latin1 as on the wire). */
function latin1Fields(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  const fields = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const field = raw[i] as Buffer | string;
    fields[i] = typeof field === 'string' ? field : field.toString('latin1');
  }
  return fields;
}

type Feed = ReturnType<typeof feedFrom>;

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
