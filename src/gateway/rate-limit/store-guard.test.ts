// The outage handling with stores that misbehave on cue: one that never answers, one that is busy.
import { pino } from 'pino';
import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import type { CounterStore } from './counter-store.ts';
import { createMemoryStore } from './memory-store.ts';
import { createRateLimiter } from './rate-limiter.ts';

const AUTH = 'Bearer guard-token';

/** A memory store that can be told to hang (calls never settle, pings fail). */
function hangingStore() {
  const inner = createMemoryStore();
  let hanging = false;
  const store: CounterStore = {
    name: 'test-store',
    hit: (...args) => (hanging ? new Promise(() => undefined) : inner.hit(...args)),
    peek: (...args) => (hanging ? new Promise(() => undefined) : inner.peek(...args)),
    ping: async () => (hanging ? { ok: false, reason: 'hanging' } : { ok: true }),
    close: () => inner.close(),
  };
  return { store, hang: (on: boolean) => void (hanging = on) };
}

const capture = () => {
  const lines: string[] = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) };
};

t.test('a store that never answers: the first call gives up at the time limit, the next ones at once', async (t) => {
  const { store, hang } = hangingStore();
  const { lines, logger } = capture();
  const limiter = await createRateLimiter({ store, limit: 10, windowSeconds: 300, clock: createFakeClock(), outagePolicy: 'fail-open', storeTimeoutMs: 40, probeIntervalMs: 20, logger });
  t.teardown(() => limiter.close());
  t.same(await limiter.check(AUTH), { kind: 'counted', count: 1 });
  hang(true);
  const times: number[] = [];
  for (let i = 0; i < 4; i++) {
    const started = performance.now();
    t.same(await limiter.check(AUTH), { kind: 'unlimited', reason: 'store-unavailable' }, `call ${i + 1} passes uncounted (fail-open)`);
    times.push(performance.now() - started);
  }
  t.ok(times[0]! >= 38 && times[0]! < 100, `first call waited out the 40 ms limit (${times[0]!.toFixed(1)} ms)`);
  t.ok(times.slice(1).every((ms) => ms < 30), `the next calls did not wait (${times.slice(1).map((ms) => ms.toFixed(1)).join(', ')} ms)`);
  hang(false);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(await limiter.check(AUTH), { kind: 'counted', count: 2 }, 'back on the store after a probe answered');
  const logged = lines.map((line) => JSON.parse(line));
  t.equal(logged.length, 2, 'the outage and the recovery logged once each');
  t.match(logged[0], { level: 40, msg: 'rate-limit store unavailable', store: 'test-store', policy: 'fail-open', reason: 'no answer within 40 ms' });
  t.match(logged[1], { level: 30, msg: 'rate-limit store recovered', store: 'test-store', policy: 'fail-open' });
});

t.test('a busy store that keeps answering is not an outage, even past the time limit', async (t) => {
  // Answers one call every 15 ms, in order, like a connection with a queue of replies.
  const inner = createMemoryStore();
  let queue = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const answer = queue.then(() => new Promise((resolve) => setTimeout(resolve, 15))).then(work);
    queue = answer.then(() => undefined);
    return answer;
  };
  const store: CounterStore = {
    name: 'busy-store',
    hit: (...args) => serially(() => inner.hit(...args)),
    peek: (...args) => serially(() => inner.peek(...args)),
    ping: async () => ({ ok: true }),
    close: () => inner.close(),
  };
  const { lines, logger } = capture();
  const limiter = await createRateLimiter({ store, limit: 100, windowSeconds: 300, clock: createFakeClock(), outagePolicy: 'fail-closed', storeTimeoutMs: 50, logger });
  t.teardown(() => limiter.close());
  const started = performance.now();
  const decisions = await Promise.all(Array.from({ length: 12 }, () => limiter.check(AUTH)));
  const ms = performance.now() - started;
  t.ok(ms > 150, `the last answer came after ${ms.toFixed(0)} ms, well past the 50 ms limit`);
  const counts = decisions.map((d) => (d.kind === 'counted' ? d.count : JSON.stringify(d)));
  t.same(counts.sort((a, b) => Number(a) - Number(b)), Array.from({ length: 12 }, (_, i) => i + 1), 'every call counted');
  t.same(lines, [], 'no outage logged');
});

t.test('a store that fails at once is decided at once', async (t) => {
  const store: CounterStore = {
    name: 'failing-store',
    hit: async () => Promise.reject(new Error('connection refused')),
    peek: async () => Promise.reject(new Error('connection refused')),
    ping: async () => ({ ok: false, reason: 'connection refused' }),
    close: async () => undefined,
  };
  const { lines, logger } = capture();
  const limiter = await createRateLimiter({ store, limit: 10, windowSeconds: 300, clock: createFakeClock(), outagePolicy: 'fail-closed', storeTimeoutMs: 1000, logger });
  t.teardown(() => limiter.close());
  const started = performance.now();
  t.same(await limiter.check(AUTH), { kind: 'unavailable', reason: 'the failing-store counter store is unavailable' });
  t.same(await limiter.status(AUTH), { kind: 'unavailable', reason: 'the failing-store counter store is unavailable' });
  t.ok(performance.now() - started < 200, 'no waiting for the 1000 ms time limit');
  t.equal(lines.length, 1, 'one log line for the outage');
  t.match(JSON.parse(lines[0]!), { msg: 'rate-limit store unavailable', reason: 'connection refused', store: 'failing-store' });
  t.same(await limiter.ping(50), { ok: false, reason: 'connection refused' });
});
