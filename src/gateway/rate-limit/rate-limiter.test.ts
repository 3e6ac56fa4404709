// The semantics of interface E, the same suite on every store: memory, SQLite, Redis (skipped
// visibly when no Redis answers). Time is a fake clock throughout, Redis included.
import { join } from 'node:path';
import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { createRateLimiter, type RateLimiter } from './rate-limiter.ts';
import { parseStoreUrl } from './store-url.ts';
import { withTestKeyPrefix, withTestRedis } from './test-redis.ts';

type Setup = { limit?: number; windowSeconds?: number };
type StoreCase = { name: string; store(t: TapTest): Promise<{ store: string; redisKeyPrefix?: string } | undefined> };

const STORES: StoreCase[] = [
  { name: 'memory', store: async () => ({ store: 'memory' }) },
  { name: 'sqlite', store: async (t) => ({ store: `sqlite:${join(t.testdir(), 'counters.db')}` }) },
  {
    name: 'redis',
    store: async (t) => {
      const url = await withTestRedis(t);
      return url ? { store: url, redisKeyPrefix: withTestKeyPrefix(t, url) } : undefined;
    },
  },
];

const bearer = (token: string) => `Bearer ${token}`;
const status = (limit: number, remaining: number, reset: number) => ({
  'x-rate-limit-limit': limit,
  'x-rate-limit-remaining': remaining,
  'x-rate-limit-reset': reset,
});

for (const storeCase of STORES) {
  t.test(`on the ${storeCase.name} store`, async (t) => {
    /** A fresh limiter on this store with a fake clock, closed when the test ends; undefined when skipped. */
    const start = async (t: TapTest, setup: Setup = {}) => {
      const where = await storeCase.store(t);
      if (!where) return undefined;
      const clock = createFakeClock();
      // Outages are redis-outage.test.ts's subject; here a generous time limit keeps a machine busy with
      // other tests from passing for one, and fail-closed makes any outage fail the test visibly.
      const limiter = await createRateLimiter({
        ...where,
        limit: setup.limit ?? 1000,
        windowSeconds: setup.windowSeconds ?? 300,
        clock,
        outagePolicy: 'fail-closed',
        storeTimeoutMs: 5000,
      });
      t.teardown(() => limiter.close());
      return { limiter, clock };
    };
    const hitTimes = async (limiter: RateLimiter, authorization: string, times: number) => {
      const kinds: Record<string, number> = {};
      for (let i = 0; i < times; i++) {
        const decision = await limiter.check(authorization);
        kinds[decision.kind] = (kinds[decision.kind] ?? 0) + 1;
      }
      return kinds;
    };

    t.test('requests 1 to 1000 are counted, the 1001st is limited with remaining 0 and reset 300', async (t) => {
      const started = await start(t);
      if (!started) return;
      const { limiter } = started;
      const counts: number[] = [];
      for (let i = 0; i < 1000; i++) {
        const decision = await limiter.check(bearer('alpha'));
        if (decision.kind === 'counted') counts.push(decision.count);
      }
      t.same(
        counts,
        Array.from({ length: 1000 }, (_, i) => i + 1),
        'each of the 1000 counted, in order',
      );
      t.same(await limiter.check(bearer('alpha')), { kind: 'limited', status: status(1000, 0, 300), retryAfterSeconds: 300 });
      t.same(
        await limiter.check(bearer('alpha')),
        { kind: 'limited', status: status(1000, 0, 300), retryAfterSeconds: 300 },
        'still limited, not counted',
      );
      t.same(
        await limiter.status(bearer('alpha')),
        { kind: 'status', status: status(1000, 0, 300) },
        'status: the count stopped at the limit',
      );
      t.same(await limiter.check(bearer('beta')), { kind: 'counted', count: 1 }, 'another token has its own counter');
    });

    t.test('the window is never extended: limited until it ends, then a new window at count 1', async (t) => {
      const started = await start(t);
      if (!started) return;
      const { limiter, clock } = started;
      t.same(await hitTimes(limiter, bearer('alpha'), 1000), { counted: 1000 });
      clock.advance(299_000);
      t.same(
        await limiter.check(bearer('alpha')),
        { kind: 'limited', status: status(1000, 0, 1), retryAfterSeconds: 1 },
        '+299 s: reset 1',
      );
      clock.advance(999);
      t.same(
        await limiter.check(bearer('alpha')),
        { kind: 'limited', status: status(1000, 0, 1), retryAfterSeconds: 1 },
        '+299.999 s: reset rounds up to 1, never 0',
      );
      clock.advance(1);
      t.same(
        await limiter.status(bearer('alpha')),
        { kind: 'status', status: status(1000, 1000, 300) },
        'exactly at expiry the entry is gone',
      );
      t.same(await limiter.check(bearer('alpha')), { kind: 'counted', count: 1 }, '+300 s: allowed again, count 1');
      clock.advance(100_000);
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(1000, 999, 200) }, 'the new window started at +300 s');
    });

    t.test('counting does not extend the window', async (t) => {
      const started = await start(t);
      if (!started) return;
      const { limiter, clock } = started;
      await limiter.check(bearer('alpha'));
      clock.advance(200_000);
      t.same(await limiter.check(bearer('alpha')), { kind: 'counted', count: 2 });
      t.same(
        await limiter.status(bearer('alpha')),
        { kind: 'status', status: status(1000, 998, 100) },
        'reset counts from the first request',
      );
      clock.advance(500);
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(1000, 998, 100) }, '99.5 s left rounds up to 100');
    });

    t.test('the status call counts nothing and reports (limit, limit, window) without an entry', async (t) => {
      const started = await start(t);
      if (!started) return;
      const { limiter, clock } = started;
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(1000, 1000, 300) }, 'no entry');
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(1000, 1000, 300) }, 'still no entry');
      t.same(await hitTimes(limiter, bearer('alpha'), 5), { counted: 5 });
      clock.advance(42_000);
      for (let i = 0; i < 3; i++)
        t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(1000, 995, 258) }, `status call ${i + 1}`);
      t.same(await limiter.check(bearer('alpha')), { kind: 'counted', count: 6 }, 'the status calls were not counted');
      t.same(await limiter.status(undefined), { kind: 'status', status: status(1000, 1000, 300) }, 'no bearer token: like count 0');
    });

    t.test(
      'requests without a bearer token are never limited or counted; a malformed bearer header is refused, never passed uncounted',
      async (t) => {
        const started = await start(t, { limit: 1 });
        if (!started) return;
        const { limiter } = started;
        for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Token abc']) {
          t.same(await hitTimes(limiter, header as string, 3), { unlimited: 3 }, `${JSON.stringify(header)}: never limited`);
          t.same(await limiter.status(header), { kind: 'status', status: status(1, 1, 300) }, `${JSON.stringify(header)}: nothing counted`);
        }
        for (const header of ['Bearer', 'Bearer ', 'xBearer tok', 'Bearer tok extra', 'Basic x Bearer tok']) {
          t.same(await hitTimes(limiter, header, 2), { malformed: 2 }, `${JSON.stringify(header)}: refused each time`);
          t.same(await limiter.status(header), { kind: 'status', status: status(1, 1, 300) }, `${JSON.stringify(header)}: nothing counted`);
        }
        t.same(await hitTimes(limiter, 'bearer tok', 1), { counted: 1 }, 'the scheme in any case: counted');
        t.same(await hitTimes(limiter, 'Bearer \t tok', 1), { limited: 1 }, 'spaces and tabs: the same token, now limited');
      },
    );

    t.test('the limit and window settings are honoured', async (t) => {
      const started = await start(t, { limit: 3, windowSeconds: 10 });
      if (!started) return;
      const { limiter, clock } = started;
      t.same(await hitTimes(limiter, bearer('alpha'), 3), { counted: 3 });
      t.same(await limiter.check(bearer('alpha')), { kind: 'limited', status: status(3, 0, 10), retryAfterSeconds: 10 });
      clock.advance(4_000);
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(3, 0, 6) });
      clock.advance(6_000);
      t.same(await limiter.status(bearer('alpha')), { kind: 'status', status: status(3, 3, 10) }, 'gone after 10 s');
      t.same(await hitTimes(limiter, bearer('alpha'), 4), { counted: 3, limited: 1 }, 'a new window of 3');
    });

    t.test('3000 concurrent hits on one token count exactly 1000', async (t) => {
      const started = await start(t);
      if (!started) return;
      const { limiter } = started;
      const decisions = await Promise.all(Array.from({ length: 3000 }, () => limiter.check(bearer('burst'))));
      const counted = decisions.filter((d) => d.kind === 'counted');
      t.equal(counted.length, 1000, '1000 counted');
      t.equal(decisions.filter((d) => d.kind === 'limited').length, 2000, '2000 limited');
      t.same(new Set(counted.map((d) => d.kind === 'counted' && d.count)).size, 1000, 'every count 1..1000 given out once');
      t.same(await limiter.status(bearer('burst')), { kind: 'status', status: status(1000, 0, 300) });
    });
  });
}

t.test('the store setting: memory, sqlite:<file>, redis://host:port[/db]', async (t) => {
  t.same(parseStoreUrl('memory'), { kind: 'memory' });
  t.same(parseStoreUrl('sqlite:./data/rate-limit.db'), { kind: 'sqlite', path: './data/rate-limit.db' });
  t.same(parseStoreUrl('sqlite:/var/lib/portolan/counters.db'), { kind: 'sqlite', path: '/var/lib/portolan/counters.db' });
  t.same(parseStoreUrl('redis://127.0.0.1:6379'), { kind: 'redis', url: 'redis://127.0.0.1:6379' });
  t.same(parseStoreUrl('redis://cache.internal:6380/2'), { kind: 'redis', url: 'redis://cache.internal:6380/2' });
  t.same(parseStoreUrl('rediss://:s3cret@cache.internal:6380/0'), { kind: 'redis', url: 'rediss://:s3cret@cache.internal:6380/0' });
  for (const value of [
    '',
    'Memory',
    'sqlite:',
    'postgres://db',
    'redis://',
    'redis://:s3cret@host:6379/zero',
    'redis://:s3cret@host:6379/0/1',
  ]) {
    const parsed = parseStoreUrl(value);
    t.ok('error' in parsed && !parsed.error.includes('s3cret'), `${JSON.stringify(value)} refused, without repeating a password`);
  }
});

t.test('bad settings are refused when the limiter is created', async (t) => {
  const base = { store: 'memory', limit: 1000, windowSeconds: 300, clock: createFakeClock() };
  await t.rejects(createRateLimiter({ ...base, store: 'redis://:s3cret@host:6379/zero' }), {
    name: 'RangeError',
    message: /database must be a number/,
  });
  await t.rejects(createRateLimiter({ ...base, limit: 0 }), { name: 'RangeError', message: /limit/ });
  await t.rejects(createRateLimiter({ ...base, limit: 1.5 }), { name: 'RangeError', message: /limit/ });
  await t.rejects(createRateLimiter({ ...base, windowSeconds: 0 }), { name: 'RangeError', message: /windowSeconds/ });
  await t.rejects(createRateLimiter({ ...base, outagePolicy: 'ignore' as 'memory' }), { name: 'RangeError', message: /outagePolicy/ });
});
