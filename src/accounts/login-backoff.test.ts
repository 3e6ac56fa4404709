import t from 'tap';
import { createFakeClock } from '../lib/clock.ts';
import { createLoginBackoff, type LoginBackoff } from './login-backoff.ts';

/** One attempt that fails when it is allowed to run; whether it ran. */
const failOnce = (backoff: LoginBackoff, name: string) => {
  if (!backoff.tryStart(name)) return false;
  backoff.finish(name, 'failure');
  return true;
};

t.test('past the free failures, the wait doubles with each failure up to its cap', async (t) => {
  const clock = createFakeClock();
  const backoff = createLoginBackoff(clock, { failuresBeforeBackoff: 3, firstDelayMs: 1000, maxDelayMs: 4000 });
  for (let i = 0; i < 3; i++) t.ok(failOnce(backoff, 'admin'), `free failure ${i + 1} is checked`);
  for (const wait of [1000, 2000, 4000, 4000]) {
    clock.advance(wait - 1);
    t.notOk(backoff.tryStart('admin'), `refused 1 ms before the ${wait} ms wait passes`);
    clock.advance(1);
    t.ok(failOnce(backoff, 'admin'), `checked once the ${wait} ms wait has passed`);
  }
  t.ok(backoff.tryStart('other'), 'other names are not affected');
});

t.test('a success resets the name: it gets its free failures again', async (t) => {
  const clock = createFakeClock();
  const backoff = createLoginBackoff(clock, { failuresBeforeBackoff: 2, firstDelayMs: 1000 });
  failOnce(backoff, 'admin');
  failOnce(backoff, 'admin');
  clock.advance(1000);
  t.ok(backoff.tryStart('admin'));
  backoff.finish('admin', 'success');
  t.equal(backoff.trackedNames(), 0, 'a name that succeeded is not remembered');
  t.ok(failOnce(backoff, 'admin'));
  t.ok(failOnce(backoff, 'admin'), 'two free failures again');
  t.notOk(backoff.tryStart('admin'));
});

t.test('a store that does not answer neither counts as a failure nor resets', async (t) => {
  const backoff = createLoginBackoff(createFakeClock(), { failuresBeforeBackoff: 2 });
  failOnce(backoff, 'admin');
  for (let i = 0; i < 5; i++) {
    t.ok(backoff.tryStart('admin'));
    backoff.finish('admin', 'no-answer');
  }
  t.ok(failOnce(backoff, 'admin'), 'the second failure is still free');
  t.notOk(backoff.tryStart('admin'), 'and then the backoff starts');
});

t.test('checks under way count: a parallel burst gets the free checks only, then one at a time', async (t) => {
  const clock = createFakeClock();
  const backoff = createLoginBackoff(clock, { failuresBeforeBackoff: 5, firstDelayMs: 1000 });
  const started = Array.from({ length: 50 }, () => backoff.tryStart('admin')).filter(Boolean).length;
  t.equal(started, 5, '5 of 50 parallel attempts are checked');
  for (let i = 0; i < 5; i++) backoff.finish('admin', 'failure');
  clock.advance(1000);
  t.equal(Array.from({ length: 50 }, () => backoff.tryStart('admin')).filter(Boolean).length, 1, 'after the wait, one check at a time');
});

t.test('memory is bounded: past maxTrackedNames the least recently tried name is forgotten', async (t) => {
  const backoff = createLoginBackoff(createFakeClock(), { failuresBeforeBackoff: 1, maxTrackedNames: 100 });
  failOnce(backoff, 'first');
  // Names as long as a header allows are kept as fixed-size hashes; their count is what is bounded.
  for (let i = 0; i < 1000; i++) failOnce(backoff, `${'x'.repeat(8000)}${i}`);
  t.equal(backoff.trackedNames(), 100);
  t.ok(backoff.tryStart('first'), 'the oldest name was forgotten');
  t.notOk(backoff.tryStart(`${'x'.repeat(8000)}999`), 'the newest is still waiting');
});

t.test('a name under attack stays tracked: refused attempts count as use', async (t) => {
  const backoff = createLoginBackoff(createFakeClock(), { failuresBeforeBackoff: 1, maxTrackedNames: 3 });
  for (const name of ['target', 'a', 'b']) failOnce(backoff, name);
  t.notOk(backoff.tryStart('target'), 'refused, and now the most recently tried');
  failOnce(backoff, 'c');
  t.notOk(backoff.tryStart('target'), 'still waiting: the eviction took the least recently tried name');
  t.ok(backoff.tryStart('a'), "'a' was forgotten instead");
});

t.test('failuresBeforeBackoff 0 turns the backoff off', async (t) => {
  const backoff = createLoginBackoff(createFakeClock(), { failuresBeforeBackoff: 0 });
  const checked = Array.from({ length: 200 }, () => failOnce(backoff, 'admin')).filter(Boolean).length;
  t.equal(checked, 200, 'every one of 200 failures in a row is checked');
  t.equal(backoff.trackedNames(), 0);
});
