// After `portolan start` is up: one memory-reducing garbage collection, as soon as the process idles.
//
// Loading the modules and building the system allocate much that lives on, so V8 grows its young
// generation to the largest it allows (two 32 MB semi-spaces here) and its touched pages stay resident:
// about 30 MB of an idle process's RSS (plus the start's garbage in the old generation). V8 gives them
// back only in a memory-reducing collection, which its memory reducer runs by itself 10 to 20 s after
// the start of an idle process (measured: 167 MB, then 137 MB). This asks for that collection once the
// event loop is idle after the start, so the process is at its idle size from then on; while the loop is
// busy (a start under load: the load needs its young generation) it waits, and after a few tries it
// leaves it to V8. One collection, 50 to 100 ms of this thread, once, in a quiet moment.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Cancel, Timers } from '../lib/timers.ts';

export type IdleCompactionOptions = {
  timers: Timers;
  /** The event loop's utilization (0 to 1) since the previous call; default: node's `performance.eventLoopUtilization`. */
  utilization?: () => number;
  /** The collection; default: V8's memory-reducing full collection (`memoryReducingCollection`). */
  collect?: () => void;
  /** How often the utilization is looked at, in ms (default 200). */
  everyMs?: number;
  /** At or below this utilization the process counts as idle (default 0.05). */
  idleAtMost?: number;
  /** Looks before giving up (default 25: 5 s at 200 ms). */
  tries?: number;
};

/**
 * Collects once, at the first look that finds the event loop idle; none after `tries` busy looks.
 * Returns a cancel (a stop before it ran).
 *
 * @example
 * const cancel = compactWhenIdle({ timers: systemTimers });
 */
export function compactWhenIdle(options: IdleCompactionOptions): Cancel {
  const { timers, everyMs = 200, idleAtMost = 0.05, tries = 25 } = options;
  const utilization = options.utilization ?? loopUtilization();
  const collect = options.collect ?? memoryReducingCollection;
  utilization(); // from now on
  let left = tries;
  let cancel: Cancel = () => undefined;
  const look = () => {
    left--;
    if (utilization() > idleAtMost) {
      if (left > 0) cancel = timers.after(everyMs, look, { background: true });
      return;
    }
    try {
      collect();
    } catch {
      // A node that cannot expose its collector (flags, an embedder): V8's own reducer does it later.
    }
  };
  cancel = timers.after(everyMs, look, { background: true });
  return () => cancel();
}

/** The event loop's utilization between two calls (node's `performance.eventLoopUtilization`). */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's full collection that also gives memory back (the one it runs near its heap limit). Node exposes
 * it as `gc` only under `--expose-gc`: that flag is set for the moment it takes to create one context
 * that has it, then unset, so no other code sees a `gc` (or a changed flag).
 */
export function memoryReducingCollection(): void {
  const gc = (globalThis as { gc?: Gc }).gc ?? gcOfANewContext();
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

function gcOfANewContext(): Gc {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as Gc;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
