import { Pool as UpstreamPool } from 'undici';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { createHopMarker, loopProblem, type HopMarker } from './hop-marker.ts';
import { exchangeWithMember, type ProxyAnswer, type ProxyRequest } from './member-exchange.ts';
import type { Member, Pool } from './pool.ts';

export type { ProxyAnswer, ProxyErrorCode, ProxyRequest } from './member-exchange.ts';

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
  /** Where the upstream timeout comes from (default: real timers); timers that are a clock (a fake clock) also tell the time. */
  timers?: Timers;
  /**
   * Who this proxy is in `Via` (default: a marker of its own). Proxies that are one traffic manager (the
   * listeners of one data plane) share one, so a loop between them is seen too.
   */
  hop?: HopMarker;
};

export type ReverseProxy = {
  /**
   * Passes one request to a member of the pool and resolves with its answer (headers, streamed body)
   * or why there is none, writing nothing: for an adapter that writes answers itself.
   */
  exchange(request: ProxyRequest): Promise<ProxyAnswer>;
  /** Closes the connections to every member once their requests are done. */
  close(): Promise<void>;
};

/**
 * The gateway's reverse proxy: one keep-alive connection pool (undici) per member; request and
 * response bodies are streamed, never held; status, headers and body pass unchanged but for the
 * hop-by-hop fields (both ways), X-Forwarded-For and Via. A request that carries this proxy's own Via entry (a
 * pool member leads back here) or has passed more than MAX_HOPS proxies is not sent: 502 at once, not a loop
 * that holds a connection per round until the upstream timeout. Failures before the answer starts become the
 * gateway's 502/504; after it started, the client connection is cut. A member's answer that comes
 * before the request body was all sent is passed on at once (the adapter closes the connection after it).
 *
 * @example
 * const proxy = createProxy({ pool, upstreamTimeoutMs: 30_000, connectionsPerMember: 64, logger });
 * const answer = await proxy.exchange({ method, url, rawHeaders, body, signal }); // see passOnStage
 */
export function createProxy(options: ProxyOptions): ReverseProxy {
  const { pool, upstreamTimeoutMs } = options;
  const timers = options.timers ?? systemTimers;
  const hop = options.hop ?? createHopMarker();
  // The member's progress is timed on the timers' own clock: a fake clock in tests, the system's otherwise.
  // Monotonic when real: a wall-clock step (NTP, a resumed VM) must not cut a member that keeps sending.
  const clock: Pick<Clock, 'nowMs'> = isClock(timers) ? timers : MONOTONIC;
  const limits = { timeoutMs: upstreamTimeoutMs, timers, now: () => clock.nowMs(), via: hop.via };
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
    const loop = loopProblem(request.rawHeaders, hop);
    if (loop) return Promise.resolve({ kind: 'failed', code: 'badGateway', message: loop, loop: true });
    const member = pool.pick();
    if (!member) return Promise.resolve({ kind: 'failed', code: 'badGateway', message: `no member of pool ${pool.name} is up` });
    return exchangeWithMember(upstreamFor(member), member.address, request, limits);
  }

  return {
    exchange,
    async close() {
      await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
      upstreams.clear();
    },
  };
}

const isClock = (timers: Timers): timers is Timers & Pick<Clock, 'nowMs'> => typeof (timers as Partial<Clock>).nowMs === 'function';

const MONOTONIC: Pick<Clock, 'nowMs'> = { nowMs: () => performance.now() };
