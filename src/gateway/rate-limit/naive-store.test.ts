// The deliberately naive read-then-write store really is wrong: the exactness tests that use it
// can therefore fail. (The real stores pass the same burst exactly: rate-limiter.test.ts.)
import { join } from 'node:path';
import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import { createNaiveStore } from './fixtures/naive-store.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { withTestKeyPrefix, withTestRedis } from './test-redis.ts';

async function burst(store: Awaited<ReturnType<typeof createNaiveStore>>) {
  // A generous time limit: the point is the store's race, not an outage.
  const limiter = await createRateLimiter({ store, limit: 1000, windowSeconds: 300, clock: createFakeClock(), storeTimeoutMs: 10_000 });
  try {
    const decisions = await Promise.all(Array.from({ length: 3000 }, () => limiter.check('Bearer naive-burst')));
    return decisions.filter((d) => d.kind === 'counted').length;
  } finally {
    await limiter.close();
  }
}

t.test('on Redis, 3000 concurrent hits let more than 1000 through', async (t) => {
  const url = await withTestRedis(t);
  if (!url) return;
  const counted = await burst(await createNaiveStore(`${url}#${withTestKeyPrefix(t, url)}`));
  t.ok(counted > 1000, `${counted} counted`);
});

t.test('on SQLite, 3000 concurrent hits let more than 1000 through', async (t) => {
  const counted = await burst(await createNaiveStore(`sqlite:${join(t.testdir(), 'counters.db')}`));
  t.ok(counted > 1000, `${counted} counted`);
});
