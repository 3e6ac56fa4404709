/**
 * Runs tasks one after another, in call order, each starting when the previous one settled.
 * The SQLite engine has one connection, so this is what keeps two async transactions from
 * interleaving their statements (or nesting BEGINs) on it.
 *
 * @example
 * const serially = createSerialQueue();
 * await Promise.all([serially(() => first()), serially(() => second())]); // second starts after first
 */
export type SerialQueue = <T>(task: () => T | Promise<T>) => Promise<T>;

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => T | Promise<T>): Promise<T> => {
    const result = tail.then(task);
    // The next task waits for this one whatever its outcome; the caller sees the outcome itself.
    tail = result.then(ignore, ignore);
    return result;
  };
}

const ignore = (): void => undefined;
