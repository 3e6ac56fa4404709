// The Redis store's batches: the hits of one turn go in one script call, split past its size, each atomic.
import t from 'tap';
import { createRedisStore } from './redis-store.ts';
import { withTestKeyPrefix, withTestRedis } from './test-redis.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

t.test('600 hits of one turn on one key, over several script calls, count exactly the limit, in order', async (t) => {
  const url = await withTestRedis(t);
  if (!url) return;
  const store = createRedisStore({ url, keyPrefix: withTestKeyPrefix(t, url) });
  t.teardown(() => store.close());
  t.ok(await store.ready(2000), 'connected');
  const rule = { limit: 500, windowMs: 60_000 };
  const outcomes = await Promise.all(Array.from({ length: 600 }, () => store.hit('shared', NOW, rule)));
  t.same(
    outcomes.map((o) => o.count),
    Array.from({ length: 600 }, (_, i) => Math.min(i + 1, 500)),
    'each hit sees the count after it, in the order taken',
  );
  t.equal(outcomes.filter((o) => o.counted).length, 500, 'exactly the limit counted');
  t.ok(
    outcomes.every((o) => o.expiresAtMs === NOW + 60_000),
    'one window, opened by the first hit',
  );
  t.same(await store.peek('shared', NOW + 1), { count: 500, expiresAtMs: NOW + 60_000 });
});

t.test('hits on many keys in one turn each get their own counter; a later window starts afresh', async (t) => {
  const url = await withTestRedis(t);
  if (!url) return;
  const store = createRedisStore({ url, keyPrefix: withTestKeyPrefix(t, url) });
  t.teardown(() => store.close());
  t.ok(await store.ready(2000), 'connected');
  const rule = { limit: 2, windowMs: 1000 };
  const keys = ['a', 'b', 'a', 'c', 'a', 'b'];
  const first = await Promise.all(keys.map((key) => store.hit(key, NOW, rule)));
  t.same(
    first.map((o) => [o.counted, o.count]),
    [
      [true, 1],
      [true, 1],
      [true, 2],
      [true, 1],
      [false, 2],
      [true, 2],
    ],
  );
  const later = await store.hit('a', NOW + 1000, rule);
  t.same(later, { counted: true, count: 1, expiresAtMs: NOW + 2000 }, 'the window ended at its expiry: a new one');
});

t.test('a hit that fails in Redis fails alone: the others of its batch are counted and answered', async (t) => {
  const url = await withTestRedis(t);
  if (!url) return;
  const prefix = withTestKeyPrefix(t, url);
  const store = createRedisStore({ url, keyPrefix: prefix });
  t.teardown(() => store.close());
  t.ok(await store.ready(2000), 'connected');
  const { Redis } = await import('ioredis');
  const other = new Redis(url);
  t.teardown(() => other.disconnect());
  await other.set(`${prefix}not-a-hash`, 'text'); // a key of another type: HMGET fails on it
  const rule = { limit: 5, windowMs: 1000 };
  const outcomes = await Promise.all(
    ['before', 'not-a-hash', 'after'].map((key) =>
      store.hit(key, NOW, rule).then(
        (result) => result.count,
        (error: Error) => error.message,
      ),
    ),
  );
  t.equal(outcomes[0], 1);
  t.match(outcomes[1], /^Redis refused the hit: WRONGTYPE/);
  t.equal(outcomes[2], 1);
});
