/**
 * The outcome of `attempt`, or `onTimeout()` when it has not settled after `timeoutMs`.
 * The attempt keeps running (nothing can cancel it here); its late outcome is dropped.
 * Used by both engines' `ping`, which must answer within its timeout whatever the server does.
 */
export function settleWithin<T>(attempt: Promise<T>, timeoutMs: number, onTimeout: () => T): Promise<T> {
  return new Promise<T>((resolve) => {
    const timer = setTimeout(() => resolve(onTimeout()), Math.max(0, timeoutMs));
    attempt.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      // `attempt` must not reject (callers map failures to values); if it does, treat it as a timeout.
      () => {
        clearTimeout(timer);
        resolve(onTimeout());
      },
    );
  });
}
