import type { Logger } from '../../lib/logger.ts';
import { systemTimers, type Cancel, type Timers } from '../../lib/timers.ts';
import type { CounterEntry, CounterRule, CounterStore, HitResult } from './counter-store.ts';
import { createMemoryStore } from './memory-store.ts';

/** What the limiter does while its store does not answer. */
export type OutagePolicy = 'fail-open' | 'fail-closed' | 'memory';
export const OUTAGE_POLICIES: readonly OutagePolicy[] = ['fail-open', 'fail-closed', 'memory'];

/** A store answer, or why there is none (store down, or no answer in time). */
export type Guarded<T> = { ok: true; value: T } | { ok: false; reason: string };

export type StoreGuardOptions = {
  store: CounterStore;
  policy: OutagePolicy;
  /** A call fails when the store has answered nothing (this call or any other) for this long. */
  timeoutMs: number;
  /** A call fails after this long even while the store keeps answering other calls (default 1000 ms). */
  maxWaitMs?: number;
  /** While the store is down, it is pinged this often; the first answer ends the outage. */
  probeIntervalMs: number;
  /** Where the time limits and the probe's interval come from (default: real timers). */
  timers?: Timers;
  logger?: Logger;
};

export type StoreGuard = {
  hit(key: string, nowMs: number, rule: CounterRule): Promise<Guarded<HitResult>>;
  peek(key: string, nowMs: number): Promise<Guarded<CounterEntry | undefined>>;
  close(): Promise<void>;
};

/**
 * Puts a time limit on every call to a store that can fail (Redis, a shared file) and applies the
 * outage policy. A store that answers nothing for `timeoutMs` is down (one that is busy answering a
 * burst is not: see `within`). The first failure or timeout marks it down, logged once; from then on
 * calls do not wait on it at all: under `memory` they are counted in a memory store of this process,
 * otherwise they answer `ok: false` at once. A probe pings the store in the background and the first
 * answer marks it up again (logged once); the memory counts of the outage are then dropped.
 *
 * @example
 * const guard = createStoreGuard({ store, policy: 'fail-closed', timeoutMs: 50, probeIntervalMs: 250, logger });
 * const answer = await guard.hit(key, clock.nowMs(), rule); // answers within about 50 ms
 */
export function createStoreGuard(options: StoreGuardOptions): StoreGuard {
  const { store, policy, timeoutMs, probeIntervalMs, logger } = options;
  const maxWaitMs = options.maxWaitMs ?? 1000;
  const timers = options.timers ?? systemTimers;
  let fallback: CounterStore | undefined;
  let down = false;
  let closed = false;
  let cancelProbe: Cancel | undefined;
  const progress = { answers: 0 };
  const within = createWithin({ progress, timeoutMs, maxWaitMs, timers });

  const markDown = (reason: string): void => {
    if (down || closed) return;
    down = true;
    if (policy === 'memory') fallback = createMemoryStore();
    logger?.warn({ store: store.name, policy, reason }, 'rate-limit store unavailable');
    // The first probe comes soon: a store that only missed a beat (a busy host) is back within
    // `timeoutMs`, which keeps the counts of a false alarm to a minimum; a real outage is then
    // probed every `probeIntervalMs`.
    scheduleProbe(Math.min(timeoutMs, probeIntervalMs));
  };

  const scheduleProbe = (delayMs = probeIntervalMs): void => {
    cancelProbe = timers.after(
      delayMs,
      async () => {
        const answer = await store.ping(timeoutMs);
        if (closed) return;
        if (!answer.ok) return scheduleProbe();
        down = false;
        const dropped = fallback;
        fallback = undefined;
        await dropped?.close();
        logger?.info({ store: store.name, policy }, 'rate-limit store recovered');
      },
      { background: true },
    );
  };

  /** The store's answer within the time limit; on failure the outage policy's answer. */
  const call = async <T>(primary: (s: CounterStore) => Promise<T>): Promise<Guarded<T>> => {
    if (!down) {
      const answer = await within(() => primary(store));
      if (answer.ok) return answer;
      markDown(answer.reason);
    }
    if (fallback !== undefined) return { ok: true, value: await primary(fallback) };
    return { ok: false, reason: `the ${store.name} counter store is unavailable` };
  };

  return {
    hit: (key, nowMs, rule) => call((s) => s.hit(key, nowMs, rule)),
    peek: (key, nowMs) => call((s) => s.peek(key, nowMs)),
    close: async () => {
      closed = true;
      cancelProbe?.();
      await fallback?.close();
      await store.close();
    },
  };
}

/**
 * `op`'s outcome, or a failure once the store has answered nothing at all for `timeoutMs`: a store
 * that keeps answering other calls is alive, only busy (a burst queued on one connection is answered
 * in order), so the call keeps waiting, up to `maxWaitMs` in all. A late answer is dropped. Time is
 * counted in the timers' periods, not read from a clock, so fake timers decide it alone. The calls made
 * in one turn of the event loop started together, so they share one timer (a cohort): under load, one
 * timer per turn instead of one per request.
 */
function createWithin(limits: { progress: { answers: number }; timeoutMs: number; maxWaitMs: number; timers: Timers }) {
  const { progress, timeoutMs, maxWaitMs, timers } = limits;
  type Cohort = { answersSeen: number; waitedMs: number; cancel: Cancel | undefined; waiting: Set<(reason: string) => void> };
  /** The cohort this turn's calls join; closed at the end of the turn. */
  let open: Cohort | undefined;

  const arm = (cohort: Cohort) => {
    const periodMs = Math.min(timeoutMs, maxWaitMs - cohort.waitedMs);
    cohort.cancel = timers.after(periodMs, () => setImmediate(check, cohort, periodMs));
  };
  const check = (cohort: Cohort, periodMs: number) => {
    cohort.cancel = undefined;
    if (cohort.waiting.size === 0) return;
    cohort.waitedMs += periodMs;
    const answeredMeanwhile = progress.answers > cohort.answersSeen;
    cohort.answersSeen = progress.answers;
    if (answeredMeanwhile && cohort.waitedMs < maxWaitMs) return arm(cohort);
    const reason = `no answer within ${cohort.waitedMs < maxWaitMs ? timeoutMs : maxWaitMs} ms`;
    for (const fail of [...cohort.waiting]) fail(reason);
  };
  const join = (): Cohort => {
    if (open) {
      // Every call of the cohort had settled and its timer was stopped: this one starts it again, same turn.
      if (!open.cancel && open.waitedMs === 0) {
        open.answersSeen = progress.answers;
        arm(open);
      }
      return open;
    }
    const cohort: Cohort = { answersSeen: progress.answers, waitedMs: 0, cancel: undefined, waiting: new Set() };
    open = cohort;
    setImmediate(() => {
      if (open === cohort) open = undefined;
    });
    arm(cohort);
    return cohort;
  };

  return <T>(op: () => Promise<T>): Promise<Guarded<T>> =>
    new Promise((resolve) => {
      const cohort = join();
      let settled = false;
      const settle = (answer: Guarded<T>) => {
        if (settled) return;
        settled = true;
        cohort.waiting.delete(fail);
        if (cohort.waiting.size === 0 && cohort.cancel) {
          cohort.cancel();
          cohort.cancel = undefined;
        }
        resolve(answer);
      };
      const fail = (reason: string) => settle({ ok: false, reason });
      cohort.waiting.add(fail);
      let work: Promise<T>;
      try {
        work = op();
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        (value) => {
          progress.answers++;
          settle({ ok: true, value });
        },
        (error: unknown) => settle({ ok: false, reason: error instanceof Error ? error.message : String(error) }),
      );
    });
}
