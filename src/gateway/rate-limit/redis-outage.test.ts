// Redis outages under each policy, over real sockets: a TCP proxy in front of Redis plays a hung
// server (`hold`: connections accepted, nothing answered) and a stopped one (`refuse`). The limiter's
// time limits run on a fake clock, so "decided within the store time limit" is exact and does not
// depend on how busy the machine is; Redis itself answers in real time.
import { pino } from 'pino';
import t from 'tap';
import { createFakeClock, hasSettled, type FakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { startTcpProxy } from '../../stores/test-tcp-proxy.ts';
import { startFreezingProxy } from './fixtures/freezing-proxy.ts';
import { createRateLimiter, type Decision } from './rate-limiter.ts';
import { createRedisStore } from './redis-store.ts';
import type { OutagePolicy } from './store-guard.ts';
import { withTestKeyPrefix, withTestRedis } from './test-redis.ts';
import { counterKey } from './token.ts';

const TOKEN = 'outage-token-6f1c';
const AUTH = `Bearer ${TOKEN}`;
const status = (limit: number, remaining: number, reset: number) => ({
  'x-rate-limit-limit': limit,
  'x-rate-limit-remaining': remaining,
  'x-rate-limit-reset': reset,
});

// What five requests get while Redis is away, with a limit of 3.
const DURING_OUTAGE: Record<OutagePolicy, Decision[]> = {
  'fail-closed': Array(5).fill({ kind: 'unavailable', reason: 'the redis counter store is unavailable' }),
  'fail-open': Array(5).fill({ kind: 'unlimited', reason: 'store-unavailable' }),
  memory: [
    { kind: 'counted', count: 1 },
    { kind: 'counted', count: 2 },
    { kind: 'counted', count: 3 },
    { kind: 'limited', status: status(3, 0, 300), retryAfterSeconds: 300 },
    { kind: 'limited', status: status(3, 0, 300), retryAfterSeconds: 300 },
  ],
};

/** The limiter's store time limit (its default). */
const STORE_TIMEOUT_MS = 50;
const PROBE_INTERVAL_MS = 50;

/**
 * Waits for `work`, moving the clock 1 ms at a time only while it is still undecided; resolves with
 * its value and how much clock time that took, or `undefined` if not decided after a second of it.
 */
async function decide<T>(clock: FakeClock, work: Promise<T>): Promise<{ value?: T; waitedMs: number }> {
  let waitedMs = 0;
  while (!(await hasSettled(work))) {
    if (waitedMs >= 1000) return { waitedMs };
    await clock.advanceAsync(1);
    waitedMs++;
  }
  return { value: await work, waitedMs };
}

/** Polls `done`, letting one outage probe come due between polls (and Redis real time to reconnect). */
async function eventually(t: TapTest, clock: FakeClock, what: string, done: () => Promise<boolean>, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await done()) return void t.pass(what);
    await clock.advanceAsync(PROBE_INTERVAL_MS);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.fail(`${what}: not after ${tries} probes`);
}

for (const mode of ['hold', 'refuse'] as const) {
  for (const policy of ['fail-closed', 'fail-open', 'memory'] as const) {
    const server = mode === 'hold' ? 'hung' : 'stopped';
    t.test(`Redis ${server}, policy ${policy}: every call decided within the store time limit, back on Redis by itself`, async (t) => {
      const url = await withTestRedis(t);
      if (!url) return;
      const target = new URL(url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      t.teardown(() => proxy.close());
      const viaProxy = new URL(url);
      viaProxy.port = String(proxy.port);
      const prefix = withTestKeyPrefix(t, url);
      const logs: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
      const clock = createFakeClock();
      const limiter = await createRateLimiter({
        store: viaProxy.href,
        redisKeyPrefix: prefix,
        limit: 3,
        windowSeconds: 300,
        clock,
        timers: clock,
        outagePolicy: policy,
        logger,
        storeTimeoutMs: STORE_TIMEOUT_MS,
        probeIntervalMs: PROBE_INTERVAL_MS,
      });
      t.teardown(() => limiter.close());
      const direct = createRedisStore({ url, keyPrefix: prefix });
      t.teardown(() => direct.close());
      await direct.ready(2000);
      const countInRedis = async () => (await direct.peek(counterKey(TOKEN), clock.nowMs()))?.count;

      t.same(await limiter.check(AUTH), { kind: 'counted', count: 1 }, 'counted on Redis before the outage');
      t.equal(await countInRedis(), 1);

      await proxy.pause(mode);
      for (const [i, expected] of DURING_OUTAGE[policy].entries()) {
        const { value, waitedMs } = await decide(clock, limiter.check(AUTH));
        t.same(value, expected, `request ${i + 1} during the outage: ${expected.kind}`);
        if (i === 0)
          t.ok(waitedMs <= STORE_TIMEOUT_MS, `the first request decided within the ${STORE_TIMEOUT_MS} ms limit (${waitedMs} ms)`);
        else t.equal(waitedMs, 0, `request ${i + 1} decided at once: the store is known to be down`);
      }
      const { value: during, waitedMs } = await decide(clock, limiter.status(AUTH));
      t.same(
        during,
        policy === 'memory'
          ? { kind: 'status', status: status(3, 0, 300) }
          : { kind: 'unavailable', reason: 'the redis counter store is unavailable' },
        'status during the outage',
      );
      t.equal(waitedMs, 0, 'status decided at once');
      t.equal(await countInRedis(), 1, 'nothing reached Redis');
      t.same((await limiter.ping(100)).ok, false, 'ping reports the outage');

      await proxy.resume();
      await eventually(t, clock, 'the status is read from Redis again', async () => {
        const answer = await limiter.status(AUTH);
        return answer.kind === 'status' && answer.status['x-rate-limit-remaining'] === 2;
      });
      t.same(await limiter.check(AUTH), { kind: 'counted', count: 2 }, 'counting continues on Redis from where it was');
      t.equal(await countInRedis(), 2);
      t.same(await limiter.ping(500), { ok: true }, 'ping answers again');

      const messages = logs.map((line) => JSON.parse(line).msg);
      t.same(messages, ['rate-limit store unavailable', 'rate-limit store recovered'], 'the outage and the recovery logged once each');
      t.notMatch(logs.join('\n'), TOKEN, 'no token in the logs');
      t.notMatch(logs.join('\n'), counterKey(TOKEN), 'no counter key in the logs');
    });
  }
}

for (const policy of ['fail-closed', 'memory'] as const) {
  t.test(`Redis hangs mid-connection, policy ${policy}: the first call gives up at the store time limit, the rest at once`, async (t) => {
    const url = await withTestRedis(t);
    if (!url) return;
    const target = new URL(url);
    const proxy = await startFreezingProxy({ host: target.hostname, port: Number(target.port || 6379) });
    t.teardown(() => proxy.close());
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    const clock = createFakeClock();
    const limiter = await createRateLimiter({
      store: viaProxy.href,
      redisKeyPrefix: withTestKeyPrefix(t, url),
      limit: 1000,
      windowSeconds: 300,
      clock,
      timers: clock,
      outagePolicy: policy,
      storeTimeoutMs: STORE_TIMEOUT_MS,
      probeIntervalMs: PROBE_INTERVAL_MS,
    });
    t.teardown(() => limiter.close());
    t.same(await limiter.check(AUTH), { kind: 'counted', count: 1 }, 'counted on Redis');

    proxy.freeze();
    const first = limiter.check(AUTH);
    await clock.advanceAsync(STORE_TIMEOUT_MS - 1);
    t.notOk(await hasSettled(first), 'the first call after the hang still waits 1 ms before the store time limit');
    await clock.advanceAsync(1);
    t.ok(await hasSettled(first), 'and gives up at the limit');
    const expected = (n: number): Decision =>
      policy === 'memory' ? { kind: 'counted', count: n } : { kind: 'unavailable', reason: 'the redis counter store is unavailable' };
    t.same(await first, expected(1));
    for (const n of [2, 3]) {
      const next = limiter.check(AUTH);
      t.ok(await hasSettled(next), `call ${n} is decided at once: the store is known to be down`);
      t.same(await next, expected(n));
    }

    proxy.thaw();
    // The request that timed out may still have reached Redis once the connection moved again.
    await eventually(t, clock, 'back on Redis', async () => {
      const answer = await limiter.status(AUTH);
      return answer.kind === 'status' && [998, 999].includes(answer.status['x-rate-limit-remaining']);
    });
    const after = await limiter.check(AUTH);
    t.ok(after.kind === 'counted' && (after.count === 2 || after.count === 3), `counting continues on Redis (${JSON.stringify(after)})`);
  });
}
