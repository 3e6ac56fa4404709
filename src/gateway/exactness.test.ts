// Issue 4, done when: four gateway processes sharing one Redis - and, separately, one SQLite file -
// receive 3000 requests at concurrency 256 on one token: exactly 1000 pass and 2000 get 429, ten runs
// out of ten; 50 tokens x 1100 interleaved: exactly 1000 pass per token. A deliberately naive
// read-then-write counter fails the same check (the check can fail). One file, so the three groups of
// four processes never compete with each other for the machine's two cores.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { withTestRedis } from './rate-limit/test-redis.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { LIMIT, passedPerToken, proveExact, startGateways, startUpstream, tempSqliteUrl, token } from './exactness-harness.ts';

t.setTimeout(600_000);

t.test('four gateway processes sharing one Redis count exactly', async (t) => {
  const redisUrl = await withTestRedis(t);
  if (!redisUrl) return;
  const upstream = await startUpstream(t);
  const gateways = await startGateways(t, {
    PORTOLAN_POOL_MEMBERS: `127.0.0.1:${upstream}`,
    PORTOLAN_RATE_LIMIT_STORE: redisUrl,
    PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX: `exactness:${randomUUID()}:`,
  });
  await proveExact(t, gateways);
});

t.test('four gateway processes sharing one SQLite file count exactly', async (t) => {
  const upstream = await startUpstream(t);
  const counters = join(tempSqliteUrl(t).dir, 'counters.db');
  const gateways = await startGateways(t, {
    PORTOLAN_POOL_MEMBERS: `127.0.0.1:${upstream}`,
    PORTOLAN_RATE_LIMIT_STORE: `sqlite:${counters}`,
  });
  await proveExact(t, gateways);
});

async function naiveThrough(t: TapTest, store: string, naive: string, extra: Record<string, string> = {}) {
  const upstream = await startUpstream(t);
  const gateways = await startGateways(t, {
    PORTOLAN_POOL_MEMBERS: `127.0.0.1:${upstream}`,
    PORTOLAN_RATE_LIMIT_STORE: store,
    PORTOLAN_TEST_NAIVE_STORE: naive,
    ...extra,
  });
  const { passed } = await passedPerToken(gateways, [token()], 3000);
  return [...passed.values()][0]!;
}

t.test('a naive read-then-write counter on Redis fails the same check', async (t) => {
  const redisUrl = await withTestRedis(t);
  if (!redisUrl) return;
  const prefix = `exactness-naive:${randomUUID()}:`;
  const through = await naiveThrough(t, redisUrl, `${redisUrl}#${prefix}`, { PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX: prefix });
  t.ok(through > LIMIT, `the naive counter let ${through} requests through, more than the limit of ${LIMIT}`);
});

t.test('a naive read-then-write counter on SQLite fails the same check', async (t) => {
  const counters = `sqlite:${join(tempSqliteUrl(t).dir, 'counters.db')}`;
  const through = await naiveThrough(t, counters, counters);
  t.ok(through > LIMIT, `the naive counter let ${through} requests through, more than the limit of ${LIMIT}`);
});
