// Test helper: the workers of one `portolan start --workers N` (test-cluster.ts, layout 'workers'), followed
// through the JSON log lines the primary and its workers write: which pid each worker has now, which role
// each worker answered requests of; kill -9 of one worker (never the primary) and the wait for the primary to
// start it again.
import { waitFor } from './test-cluster-wait.ts';

export type Workers = {
  /** The pid of worker `number` (1..N) now. */
  pid(number: number): number;
  /** kill -9 of worker `number`; resolves with its pid once the primary saw it die. */
  kill(number: number): Promise<number>;
  /** Resolves once the primary has started worker `number` again: a pid other than `former`, ready. */
  restarted(number: number, former: number): Promise<void>;
  /** How many requests of `role` each worker answered (their access lines), by worker number. */
  answered(role: string): ReadonlyMap<number, number>;
};

/** The fields of the log lines read here (the primary's are worker 0). */
type LogLine = { msg?: string; worker?: number; pid?: number; pids?: Record<string, number>; role?: string };

/** The workers' state, fed with every line the primary's process writes (`onLine`). */
export function followWorkers(output: () => string): { onLine(line: string): void; running(): boolean; workers: Workers } {
  const pids = new Map<number, number>();
  const dead = new Set<number>();
  const answered = new Map<string, Map<number, number>>();
  const onLine = (text: string) => {
    if (!text.startsWith('{')) return;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    if (line.msg === 'request' && line.role && line.worker) {
      const byWorker = answered.get(line.role) ?? new Map<number, number>();
      answered.set(line.role, byWorker.set(line.worker, (byWorker.get(line.worker) ?? 0) + 1));
    } else if (line.worker === 0 && line.msg === 'every worker is running' && line.pids) {
      for (const [number, pid] of Object.entries(line.pids)) pids.set(Number(number), pid);
    } else if (line.worker !== undefined && line.pid !== undefined && line.msg === 'worker restarted') {
      pids.set(line.worker, line.pid);
    } else if (line.worker !== undefined && line.pid !== undefined && line.msg === 'worker died; restarting it') {
      dead.add(line.pid);
    }
  };
  /** The primary's last lines but the access lines, for a wait that gave up. */
  const tail = () =>
    output()
      .split('\n')
      .filter((line) => !line.includes('"msg":"request"'))
      .slice(-30)
      .join('\n');
  const pidOf = (number: number) => {
    const pid = pids.get(number);
    if (pid === undefined) throw new Error(`no pid known for worker ${number}`);
    return pid;
  };
  return {
    onLine,
    running: () => pids.size > 0,
    workers: {
      pid: pidOf,
      async kill(number) {
        const pid = pidOf(number);
        process.kill(pid, 'SIGKILL');
        await waitFor(`the primary to see worker ${number} (pid ${pid}) die`, async () => dead.has(pid), tail);
        return pid;
      },
      restarted: (number, former) =>
        waitFor(`the primary to start worker ${number} again`, async () => pids.get(number) !== former && !dead.has(pidOf(number)), tail),
      answered: (role) => answered.get(role) ?? new Map(),
    },
  };
}
