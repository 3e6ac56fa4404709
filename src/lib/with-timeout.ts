import { systemTimers, type Timers } from './timers.ts';

/** Resolves with `work`'s result, or with `onTimeout()` once `ms` have passed on `timers`, whichever is first. */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => T, timers: Timers = systemTimers): Promise<T> {
  let cancel: () => void = () => {};
  const timeout = new Promise<T>((resolve) => {
    cancel = timers.after(ms, () => resolve(onTimeout()));
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    cancel();
  }
}
