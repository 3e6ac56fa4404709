import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who receives an upload: `id` is unique per process start (the lease's fencing token); `machine` and
 * `pid` let another process on the same machine tell at once that the owner is gone.
 */
export type UploadOwner = { id: string; machine: string; pid: number };

/**
 * Whether an upload's owner is known to be gone, beyond its lease: `true` only when that is certain.
 * A start uses it to remove at once the uploads of a process killed moments before, instead of waiting
 * for their leases to lapse.
 */
export type OwnerLiveness = (owner: Pick<UploadOwner, 'machine' | 'pid'>) => boolean;

/**
 * This machine's name as far as process ids mean anything: the host name and the pid namespace (two
 * containers may share a host name; their pids are not comparable). '' where the namespace cannot be
 * read: then no owner is ever judged gone by its pid, only by its lease.
 */
export function thisMachine(): string {
  try {
    return `${hostname()}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return '';
  }
}

/**
 * The liveness of owners seen from this process: an owner on this machine whose process no longer
 * exists (signal 0 answers ESRCH) is gone. Our own pid is never judged gone (another service in this
 * process, or a process before us that had the same pid, as pid 1 in a container: its lease decides).
 *
 * @example
 * const gone = processLiveness(thisMachine(), process.pid);
 * gone({ machine: row.owner_machine, pid: row.owner_pid }); // true: remove the upload now
 */
export function processLiveness(machine: string, ownPid: number): OwnerLiveness {
  return (owner) => {
    if (machine === '' || owner.machine !== machine || owner.pid === ownPid || !Number.isSafeInteger(owner.pid) || owner.pid < 1)
      return false;
    try {
      process.kill(owner.pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  };
}
