// The outage handling with stores that misbehave on cue: one that never answers, one that is busy.
// Time is a fake clock that is also the guard's timers: every time limit is proven exactly, and no
// result depends on how fast the machine is.
import { pino } from 'pino';
import t from 'tap';
import { createFakeClock, hasSettled } from '../../lib/clock.ts';
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

t.test('a store that never answers: the first call gives up at the time limit, not before, the next ones at once', async (t) => {
  const { store, hang } = hangingStore();
  const { lines, logger } = capture();
  const clock = createFakeClock();
  const limiter = await createRateLimiter({
    store,
    limit: 10,
    windowSeconds: 300,
    clock,
    timers: clock,
    outagePolicy: 'fail-open',
    storeTimeoutMs: 40,
    probeIntervalMs: 20,
    logger,
  });
  t.teardown(() => limiter.close());
  t.same(await limiter.check(AUTH), { kind: 'counted', count: 1 });
  hang(true);
  const first = limiter.check(AUTH);
  await clock.advanceAsync(39);
  t.notOk(await hasSettled(first), 'the first call still waits 1 ms before the 40 ms limit');
  await clock.advanceAsync(1);
  t.same(await first, { kind: 'unlimited', reason: 'store-unavailable' }, 'then passes uncounted (fail-open)');
  for (let i = 2; i <= 4; i++) {
    const next = limiter.check(AUTH);
    t.ok(await hasSettled(next), `call ${i} is decided without any time passing`);
    t.same(await next, { kind: 'unlimited', reason: 'store-unavailable' });
  }
  hang(false);
  await clock.advanceAsync(20);
  t.same(await limiter.check(AUTH), { kind: 'counted', count: 2 }, 'back on the store after a probe answered');
  const logged = lines.map((line) => JSON.parse(line));
  t.equal(logged.length, 2, 'the outage and the recovery logged once each');
  t.match(logged[0], {
    level: 40,
    msg: 'rate-limit store unavailable',
    store: 'test-store',
    policy: 'fail-open',
    reason: 'no answer within 40 ms',
  });
  t.match(logged[1], { level: 30, msg: 'rate-limit store recovered', store: 'test-store', policy: 'fail-open' });
});

t.test('a busy store that keeps answering is not an outage, even past the time limit', async (t) => {
  const clock = createFakeClock();
  // Answers one call every 15 ms of the clock, in order, like a connection with a queue of replies.
  const inner = createMemoryStore();
  let queue = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const answer = queue.then(() => new Promise<void>((resolve) => clock.after(15, resolve))).then(work);
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
  const limiter = await createRateLimiter({
    store,
    limit: 100,
    windowSeconds: 300,
    clock,
    timers: clock,
    outagePolicy: 'fail-closed',
    storeTimeoutMs: 50,
    logger,
  });
  t.teardown(() => limiter.close());
  const started = clock.nowMs();
  const deciding = Promise.all(Array.from({ length: 12 }, () => limiter.check(AUTH)));
  while (!(await hasSettled(deciding)) && clock.nowMs() - started < 10_000) await clock.advanceAsync(5);
  t.equal(clock.nowMs() - started, 180, 'the last answer came after 12 x 15 ms, well past the 50 ms limit');
  const counts = (await deciding).map((d) => (d.kind === 'counted' ? d.count : JSON.stringify(d)));
  t.same(
    counts.sort((a, b) => Number(a) - Number(b)),
    Array.from({ length: 12 }, (_, i) => i + 1),
    'every call counted',
  );
  t.same(lines, [], 'no outage logged');
});

t.test('a store that answers nothing for the time limit while others wait is an outage', async (t) => {
  // The counter-case of the busy store: the same queue, but it stops answering after two calls.
  const clock = createFakeClock();
  const inner = createMemoryStore();
  let answered = 0;
  const store: CounterStore = {
    name: 'stalling-store',
    hit: (...args) =>
      answered++ < 2
        ? new Promise<void>((resolve) => clock.after(15 * answered, resolve)).then(() => inner.hit(...args))
        : new Promise(() => undefined),
    peek: () => new Promise(() => undefined),
    ping: async () => ({ ok: false, reason: 'stalled' }),
    close: () => inner.close(),
  };
  const limiter = await createRateLimiter({
    store,
    limit: 100,
    windowSeconds: 300,
    clock,
    timers: clock,
    outagePolicy: 'fail-closed',
    storeTimeoutMs: 50,
  });
  t.teardown(() => limiter.close());
  const deciding = Promise.all(Array.from({ length: 4 }, () => limiter.check(AUTH)));
  await clock.advanceAsync(99);
  t.notOk(await hasSettled(deciding), 'answers at 15 and 30 ms keep the waiting calls alive past 50 ms');
  await clock.advanceAsync(1);
  const decisions = await deciding;
  t.same(
    decisions.map((d) => d.kind),
    ['counted', 'counted', 'unavailable', 'unavailable'],
    'nothing answered between 50 and 100 ms: the waiting calls give up',
  );
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
  const clock = createFakeClock();
  const limiter = await createRateLimiter({
    store,
    limit: 10,
    windowSeconds: 300,
    clock,
    timers: clock,
    outagePolicy: 'fail-closed',
    storeTimeoutMs: 1000,
    logger,
  });
  t.teardown(() => limiter.close());
  const checking = limiter.check(AUTH);
  t.ok(await hasSettled(checking), 'decided without waiting for the 1000 ms time limit');
  t.same(await checking, { kind: 'unavailable', reason: 'the failing-store counter store is unavailable' });
  t.same(await limiter.status(AUTH), { kind: 'unavailable', reason: 'the failing-store counter store is unavailable' });
  t.equal(lines.length, 1, 'one log line for the outage');
  t.match(JSON.parse(lines[0]!), { msg: 'rate-limit store unavailable', reason: 'connection refused', store: 'failing-store' });
  t.same(await limiter.ping(50), { ok: false, reason: 'connection refused' });
});
