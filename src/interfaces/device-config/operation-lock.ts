/**
 * The device's one configuration operation at a time, in the process that holds the active lease (only it
 * deploys: the lease makes this lock the pair's). A synchronous operation tries it and is refused busy when
 * it is held; a queued task waits for it, and waiting tasks take it before any new synchronous operation.
 *
 * @example
 * const release = lock.tryAcquire();
 * if (!release) return busyAnswer();
 * try { await deploy(); } finally { release(); }
 */
export function createOperationLock() {
  let held = false;
  const waiting: (() => void)[] = [];

  const releaser = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = waiting.shift();
      if (next) next();
      else held = false;
    };
  };

  return {
    isHeld: () => held,
    /** The release of the lock, or undefined when it is held. */
    tryAcquire(): (() => void) | undefined {
      if (held) return undefined;
      held = true;
      return releaser();
    },
    /** Waits for the lock; resolves to its release. */
    async acquire(): Promise<() => void> {
      if (!held) {
        held = true;
        return releaser();
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
      return releaser();
    },
  };
}

export type OperationLock = ReturnType<typeof createOperationLock>;
