import type { Cancel, Timers } from './timers.ts';

/** The source of time, passed in so tests can move it; domain code never calls Date.now(). */
export type Clock = { now(): Date; nowMs(): number };

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** Lets the work a fired timer started (promise reactions, immediates, callbacks of finished I/O) run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock that only moves when told to, for tests. It is also the timers of whatever it is passed
 * to: a timer fires when the clock is advanced to or past its time, in time order, so a test proves
 * "after 16 s" and "not before" without waiting and whatever the machine's speed.
 *
 * @example
 * const clock = createFakeClock();
 * const pool = createPool({ name: 'p', members, clock, timers: clock });
 * await clock.advanceAsync(5000); // the next probe starts, and its result is applied once it answers
 */
export function createFakeClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let current = start;
  let sequence = 0;
  // Due time, then scheduling order: two timers due at once fire in the order they were set.
  const timers = new Map<number, { at: number; fn: () => void }>();

  const nextDue = (until: number) => {
    let next: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of timers) {
      if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
    }
    return next;
  };

  /** Fires the earliest timer due by `until`; false when there is none. */
  const fireNext = (until: number) => {
    const next = nextDue(until);
    if (!next) return false;
    timers.delete(next[0]);
    current = Math.max(current, next[1].at);
    next[1].fn();
    return true;
  };

  const clock = {
    now: () => new Date(current),
    nowMs: () => current,
    after(ms: number, fn: () => void): Cancel {
      const id = sequence++;
      timers.set(id, { at: current + Math.max(0, ms), fn });
      return () => void timers.delete(id);
    },
    /**
     * Moves time forward by `ms`, firing every timer due on the way (a timer set by another set
     * for later fires too, if it falls within). Synchronous: what a timer starts runs afterwards.
     */
    advance(ms: number) {
      const target = current + ms;
      while (fireNext(target));
      current = target;
    },
    /**
     * Like `advance`, but after each timer it fires, lets the work it started run (one turn of the
     * event loop) before firing the next: a chain of timers and promises behaves as it would in
     * real time. Real I/O it starts (a socket) may of course take longer than one turn.
     */
    async advanceAsync(ms: number) {
      const target = current + ms;
      while (fireNext(target)) await nextTurn();
      current = target;
      await nextTurn();
    },
    /** The timers waiting to fire: in how many ms each will, soonest first. */
    pendingTimers: () => [...timers.values()].map((timer) => timer.at - current).sort((a, b) => a - b),
  };
  return clock satisfies Clock & Timers;
}

export type FakeClock = ReturnType<typeof createFakeClock>;

/**
 * For tests on a fake clock: whether `promise` has settled once the work already under way has had a
 * turn to run, that is, without the clock moving (or has not: it waits for a timer).
 *
 * @example
 * t.ok(await hasSettled(limiter.check(auth)), 'decided at once, without waiting for the time limit');
 */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await nextTurn();
  return settled;
}
