import { Redis } from 'ioredis';
import type { CounterRule, CounterStore, HitResult } from './counter-store.ts';
import { HIT_BATCH_SCRIPT } from './redis-hit-script.ts';

export type RedisStoreOptions = {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...` (TLS). */
  url: string;
  /** Prepended to every counter key (default `portolan:rl:`), so one Redis can serve several deployments. */
  keyPrefix?: string;
  /**
   * A command without a reply by then fails, and a connection with a reply outstanding that receives
   * nothing for this long is cut and reopened (default 2000 ms): commands never pile up on a hung
   * server. It is only that backstop; the limiter's own time limit (store guard) bounds a decision.
   * Keep it well above that limit: these timers may fire before a reply already waiting in the socket
   * is read, after the process was held up.
   */
  commandTimeoutMs?: number;
  /** Longest pause between reconnection attempts (default 1000 ms); attempts start at 50 ms and double. */
  maxReconnectDelayMs?: number;
};

export type RedisStore = CounterStore & {
  /** Resolves true once connected and ready, false if not within `timeoutMs` (it keeps trying). */
  ready(timeoutMs: number): Promise<boolean>;
};

export const DEFAULT_REDIS_KEY_PREFIX = 'portolan:rl:';
// Most hits in one script call (a script holds Redis for its whole run).
const MAX_BATCH = 256;
// Keys outlive their window by this much, so Redis drops them only once no clock can still read them.
const CLEANUP_GRACE_MS = 60_000;

type WithHitCommand = { rateLimitHits(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<(string | number)[]> };
type Pending = { key: string; nowMs: number; rule: CounterRule; resolve(result: HitResult): void; reject(error: unknown): void };

/**
 * Counters in Redis, shared by any number of gateway processes on any number of machines: the hits of
 * one event-loop turn in one Lua script call (each hit atomic, in order; one round trip per batch). The client never queues: with the connection down a command fails at once
 * (no offline queue, no resend), a hung connection is cut after `commandTimeoutMs`, and the
 * client reconnects by itself with capped exponential backoff.
 *
 * @example
 * const store = createRedisStore({ url: 'redis://127.0.0.1:6379/0' });
 * await store.ready(1000);
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  const backstopMs = options.commandTimeoutMs ?? 2000;
  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: backstopMs,
    // A hung server (socket open, nothing answering) is left, not waited on forever.
    socketTimeout: backstopMs,
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt - 1, 16), maxDelay),
    lazyConnect: false,
    // Commands issued in the same turn of the event loop leave in one write: under load (many
    // requests in flight per process) this saves a syscall and a Redis read per request.
    enableAutoPipelining: true,
  });
  // Failures surface through the commands; the limiter logs the outage once. Without a listener,
  // ioredis would print every reconnection error.
  client.on('error', () => undefined);
  client.defineCommand('rateLimitHits', { lua: HIT_BATCH_SCRIPT });
  const commands = client as unknown as WithHitCommand;

  // The hits of one turn, sent after that turn's I/O as one script call; each answered from its reply. While a
  // batch is out, the next one gathers and leaves when its reply is in (one round trip at a time, so under
  // load a batch holds what arrived meanwhile: fewer, larger calls, each hit still atomic and in order).
  let batch: Pending[] = [];
  let scheduled = false;
  let outstanding = 0;
  const settled = () => {
    if (--outstanding === 0 && batch.length > 0) flush();
  };
  const send = (hits: Pending[]) => {
    outstanding++;
    // One rule per call: a batch is split where the rule changes (the limiter has one; the interface allows more).
    const { limit, windowMs } = hits[0]!.rule;
    const keysAndArgs: (string | number)[] = hits.map((hit) => prefix + hit.key);
    keysAndArgs.push(limit, windowMs + CLEANUP_GRACE_MS);
    for (const hit of hits) keysAndArgs.push(hit.nowMs, hit.nowMs + windowMs);
    commands.rateLimitHits(hits.length, ...keysAndArgs).then(
      (replies) => {
        for (let i = 0; i < hits.length; i++) {
          const hit = hits[i]!;
          if (Number(replies[3 * i]) === -1) {
            hit.reject(new Error(`Redis refused the hit: ${String(replies[3 * i + 2]).slice(0, 200)}`));
            continue;
          }
          hit.resolve({
            counted: Number(replies[3 * i]) === 1,
            count: Math.min(Number(replies[3 * i + 1]), limit),
            expiresAtMs: Number(replies[3 * i + 2]),
          });
        }
        settled();
      },
      (error: unknown) => {
        for (const hit of hits) hit.reject(error);
        settled();
      },
    );
  };
  const flush = () => {
    scheduled = false;
    if (outstanding > 0) return; // sent when the batch out is answered
    const hits = batch;
    batch = [];
    let start = 0;
    for (let i = 1; i <= hits.length; i++) {
      const ruleChanges =
        i < hits.length && (hits[i]!.rule.limit !== hits[start]!.rule.limit || hits[i]!.rule.windowMs !== hits[start]!.rule.windowMs);
      if (i === hits.length || ruleChanges || i - start >= MAX_BATCH) {
        send(hits.slice(start, i));
        start = i;
      }
    }
  };

  return {
    name: 'redis',
    hit: (key, nowMs, rule) =>
      new Promise<HitResult>((resolve, reject) => {
        batch.push({ key, nowMs, rule, resolve, reject });
        if (!scheduled && outstanding === 0) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
    peek: async (key, nowMs) => {
      const [count, expires] = await client.hmget(prefix + key, 'count', 'expires');
      if (count === null || expires === null || Number(expires) <= nowMs) return undefined;
      return { count: Number(count), expiresAtMs: Number(expires) };
    },
    ping: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<string>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([client.ping(), late]);
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
      } finally {
        clearTimeout(timer);
      }
    },
    ready: (timeoutMs) =>
      new Promise<boolean>((resolve) => {
        if (client.status === 'ready') return resolve(true);
        const done = (ok: boolean) => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ok);
        };
        const onReady = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      }),
    close: async () => {
      // QUIT lets replies in flight arrive; a server that does not answer is simply left.
      if (client.status === 'ready') await Promise.race([client.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 200))]);
      client.disconnect();
    },
  };
}
