import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** A lease holder's identity: this machine's host name, the process id, and a random part (unique per process start). */
export const newHolderId = (): string => `${hostname()}:${process.pid}:${randomUUID()}`;

/**
 * Whether the process a holder id names is certainly gone: it ran on this machine (same host name) and no
 * process has its id any more. Anything else (another machine, a live process) is not certain, and its lease
 * is left to lapse. A device restarted after a crash takes its own former lease at once this way.
 */
export function holderGone(holder: string, ownHost: string = hostname()): boolean {
  const [host, pidText] = holder.split(':');
  const pid = Number(pidText);
  if (host !== ownHost || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
