import type { RateLimitStatus } from '../../../generated/rate-limit/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { CounterRule, CounterStore, PingResult } from './counter-store.ts';
import { createMemoryStore } from './memory-store.ts';
import { secondsLeft, statusOf } from './rate-limit-status.ts';
import { createSqliteStore } from './sqlite-store.ts';
import { createStoreGuard, OUTAGE_POLICIES, type OutagePolicy, type StoreGuard } from './store-guard.ts';
import { parseStoreUrl } from './store-url.ts';
import { counterKey, readBearerToken } from './token.ts';

export type RateLimiterOptions = {
  /** `memory`, `sqlite:<file>`, `redis://host:port[/db]`, or a store object (tests). */
  store: string | CounterStore;
  /** Requests counted per token and window (seed: 1000). */
  limit: number;
  /** Window length from the token's first counted request, never extended (seed: 300). */
  windowSeconds: number;
  clock: Clock;
  /** While a Redis or SQLite store does not answer (default `memory`); a memory store never fails. */
  outagePolicy?: OutagePolicy;
  /** Prefix of the Redis keys (default `portolan:rl:`). */
  redisKeyPrefix?: string;
  logger?: Logger;
  /**
   * Each call to a Redis, SQLite or injected store answers within this time or counts as an outage
   * (default 50 ms, so a decision is made within 100 ms even on a busy machine). A store that keeps
   * answering other calls is busy, not down: calls then wait up to the larger of 1 s and this limit.
   * Exactness across processes holds while the store answers in time: a call that times out is
   * decided by the outage policy.
   */
  storeTimeoutMs?: number;
  /** While the store is down it is pinged this often (default 250 ms). */
  probeIntervalMs?: number;
  /** Where the store time limits and the outage probe's interval come from (default: real timers). */
  timers?: Timers;
};

/** What the gateway does with a request (any request but `GET /rate_limit_status`). */
export type Decision =
  /** Pass it on uncounted: no bearer token, the store is down and the policy is `fail-open`, or the limiter is switched off. */
  | { kind: 'unlimited'; reason: 'no-bearer-token' | 'store-unavailable' | 'limiter-off' }
  /**
   * Refuse it (400, `WWW-Authenticate: Bearer error="invalid_request"`): its Authorization names Bearer but is
   * not one `Bearer <token>` (token.ts); passing it on uncounted would let a token's requests past the limit.
   */
  | { kind: 'malformed'; reason: string }
  /** Pass it on; it was counted (`count` of the limit, this request included). */
  | { kind: 'counted'; count: number }
  /** Answer 429 with `status` as the body and `Retry-After: retryAfterSeconds`; not counted. */
  | { kind: 'limited'; status: RateLimitStatus; retryAfterSeconds: number }
  /** The store is down and the policy is `fail-closed`: answer 503 LimiterUnavailable. */
  | { kind: 'unavailable'; reason: string };

/** The answer to `GET /rate_limit_status`, or unavailable (store down, policy not `memory`): answer 500. */
export type StatusResult = { kind: 'status'; status: RateLimitStatus } | { kind: 'unavailable'; reason: string };

export type RateLimiter = {
  /**
   * Counts one request of the token in `authorization` and decides: the request's `Authorization` field, or
   * every one of them when it has several (`authorizationFields(rawHeaders)`).
   */
  check(authorization: string | readonly string[] | undefined): Promise<Decision>;
  /** The token's status; counts nothing (a malformed header reads as no token: see readBearerToken for the refusal). */
  status(authorization: string | string[] | undefined): Promise<StatusResult>;
  /** Whether the store answers within `timeoutMs` (for /health); never rejects. */
  ping(timeoutMs: number): Promise<PingResult>;
  close(): Promise<void>;
};

/**
 * The per-token rate limiter of interface E. Counting is atomic in every store: concurrent requests
 * of one token, in one process or many sharing a SQLite file or Redis, never count past the limit.
 * Time comes only from `clock`. Waits up to a second for Redis at start; if it does not answer, the
 * limiter starts anyway and the outage policy applies until it does.
 *
 * @example
 * const limiter = await createRateLimiter({ store: 'redis://127.0.0.1:6379', limit: 1000, windowSeconds: 300, clock: systemClock });
 * const decision = await limiter.check(authorizationFields(req.rawHeaders));
 * if (decision.kind === 'limited') return { status: 429, body: decision.status, headers: { 'retry-after': String(decision.retryAfterSeconds) } };
 */
export async function createRateLimiter(options: RateLimiterOptions): Promise<RateLimiter> {
  const { limit, windowSeconds, clock } = options;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('rate limiter: limit must be a whole number of at least 1');
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1)
    throw new RangeError('rate limiter: windowSeconds must be a whole number of at least 1');
  const policy = options.outagePolicy ?? 'memory';
  if (!OUTAGE_POLICIES.includes(policy)) throw new RangeError(`rate limiter: outagePolicy must be one of ${OUTAGE_POLICIES.join(', ')}`);
  const timeoutMs = options.storeTimeoutMs ?? 50;
  const maxWaitMs = Math.max(1000, timeoutMs);
  const rule: CounterRule = { limit, windowMs: windowSeconds * 1000 };

  const store = await openStore(options, maxWaitMs);
  // The built-in memory store cannot fail, so it is called directly: no timer on the hot path.
  const guard: StoreGuard | undefined =
    options.store === 'memory'
      ? undefined
      : createStoreGuard({
          store,
          policy,
          timeoutMs,
          maxWaitMs,
          probeIntervalMs: options.probeIntervalMs ?? 250,
          timers: options.timers,
          logger: options.logger,
        });

  const hit = (key: string, nowMs: number) =>
    guard ? guard.hit(key, nowMs, rule) : store.hit(key, nowMs, rule).then((value) => ({ ok: true as const, value }));
  const peek = (key: string, nowMs: number) =>
    guard ? guard.peek(key, nowMs) : store.peek(key, nowMs).then((value) => ({ ok: true as const, value }));

  return {
    async check(authorization) {
      const reading = readBearerToken(authorization);
      if (reading.kind === 'none') return { kind: 'unlimited', reason: 'no-bearer-token' };
      if (reading.kind === 'malformed') return reading;
      const nowMs = clock.nowMs();
      const answer = await hit(counterKey(reading.token), nowMs);
      if (!answer.ok)
        return policy === 'fail-closed'
          ? { kind: 'unavailable', reason: answer.reason }
          : { kind: 'unlimited', reason: 'store-unavailable' };
      const { counted, count, expiresAtMs } = answer.value;
      if (counted) return { kind: 'counted', count };
      const reset = secondsLeft(expiresAtMs, nowMs, rule.windowMs);
      return {
        kind: 'limited',
        status: { 'x-rate-limit-limit': limit, 'x-rate-limit-remaining': 0, 'x-rate-limit-reset': reset },
        retryAfterSeconds: reset,
      };
    },
    async status(authorization) {
      const reading = readBearerToken(authorization);
      const nowMs = clock.nowMs();
      if (reading.kind !== 'token') return { kind: 'status', status: statusOf(undefined, nowMs, rule) };
      const answer = await peek(counterKey(reading.token), nowMs);
      if (!answer.ok) return { kind: 'unavailable', reason: answer.reason };
      return { kind: 'status', status: statusOf(answer.value, nowMs, rule) };
    },
    ping: (pingTimeoutMs) => store.ping(pingTimeoutMs),
    close: () => (guard ? guard.close() : store.close()),
  };
}

async function openStore(options: RateLimiterOptions, maxWaitMs: number): Promise<CounterStore> {
  if (typeof options.store !== 'string') return options.store;
  const location = parseStoreUrl(options.store);
  if ('error' in location) throw new RangeError(location.error);
  switch (location.kind) {
    case 'memory':
      return createMemoryStore();
    case 'sqlite':
      return createSqliteStore({ path: location.path });
    case 'redis': {
      // Loaded only here: ioredis costs ~20 ms and ~5 MB at a start that counts in memory or SQLite.
      const { createRedisStore } = await import('./redis-store.ts');
      const store = createRedisStore({ url: location.url, keyPrefix: options.redisKeyPrefix, commandTimeoutMs: 2 * maxWaitMs });
      await store.ready(1000);
      return store;
    }
  }
}
