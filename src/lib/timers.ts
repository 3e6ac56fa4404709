/** Cancels what was scheduled; harmless once it has run or was cancelled. */
export type Cancel = () => void;

/**
 * The source of delays (timeouts, intervals, background checks), passed in like the clock so that
 * tests move time instead of waiting for it: `createFakeClock()` is also a `Timers` that fires when
 * advanced. Domain and traffic code never calls `setTimeout` for behaviour that depends on time.
 */
export type Timers = {
  /**
   * Calls `fn` once, `ms` from now. A `background` timer does not keep the process alive (node's
   * `unref`): use it for housekeeping that must not hold up a clean exit.
   *
   * @example
   * const cancel = timers.after(5000, () => probe(member));
   * cancel(); // on stop
   */
  after(ms: number, fn: () => void, options?: { background?: boolean }): Cancel;
};

/** Real timers (node's `setTimeout`). */
export const systemTimers: Timers = {
  after(ms, fn, options) {
    const timer = setTimeout(fn, ms);
    if (options?.background) timer.unref();
    return () => clearTimeout(timer);
  },
};
