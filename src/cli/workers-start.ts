// `portolan start --workers N` on node:cluster: the primary (it serves nothing itself) and each worker.
// The primary refuses per-process stores, prepares the store once (app/cluster.ts), forks the workers
// (workers.ts supervises them), prints the banner once they all listen, and on SIGINT or SIGTERM stops them
// all, each draining as a single process does. Each worker runs startSystem with the roles and ports the
// primary gives it; on Linux node:cluster hands each role's connections to the workers in turn.
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../app/config.ts';
import type { AdminCredentials } from '../accounts/admin-bootstrap.ts';
import type { RoleName } from '../lib/roles.ts';
import type { BannerRole } from './banner.ts';
import type { WorkerHandle, WorkerReport } from './workers.ts';
import { closeHandoffsOnExit } from './workers-handoff.ts';

type Io = { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; env: NodeJS.ProcessEnv };

/** What the primary sends a worker once it asks (`portolan:hello`): its number, the account, its roles and ports. */
type WorkerStartMessage = {
  type: 'portolan:start';
  worker: number;
  admin: AdminCredentials;
  roles: readonly RoleName[];
  /** Every role the workers run together (the role map names them all, whichever worker answers it). */
  allRoles: readonly RoleName[];
  ports: Readonly<Record<RoleName, number>>;
};
type WorkerHello = { type: 'portolan:hello' };

const isReport = (message: unknown): message is WorkerReport =>
  typeof message === 'object' &&
  message !== null &&
  ((message as { type?: unknown }).type === 'portolan:ready' || (message as { type?: unknown }).type === 'portolan:failed');

/** Whether this process is a worker forked by `portolan start --workers`. */
export const isWorkerProcess = () => cluster.isWorker;

/** The primary: resolves with the exit code when the start fails; once running, the process exits on a signal. */
export async function startPrimary(config: Config, io: Io): Promise<number> {
  const [{ createLogger }, { systemClock }, { systemTimers }, { startBanner }, { explainStartFailure }, cl, { superviseWorkers }] =
    await Promise.all([
      import('../lib/logger.ts'),
      import('../lib/clock.ts'),
      import('../lib/timers.ts'),
      import('./banner.ts'),
      import('./failures.ts'),
      import('../app/cluster.ts'),
      import('./workers.ts'),
    ]);
  const problem = cl.workersProblem(config);
  if (problem) {
    io.stderr.write(`${problem}\n`);
    return 2;
  }
  // Worker 0 is the primary in the logs; the workers are 1..N.
  const logger = createLogger({ level: config.logLevel, format: config.logFormat }).child({ worker: 0 });
  let prepared;
  try {
    prepared = await cl.prepareWorkers(config, { logger, clock: systemClock, announce: (message) => io.stdout.write(`${message}\n`) });
  } catch (error) {
    const line = explainStartFailure(error, config.database);
    if (line === undefined) throw error;
    logger.flush?.();
    io.stderr.write(`${line}\n`);
    return 2;
  }
  const startOf = (worker: number): WorkerStartMessage => ({
    type: 'portolan:start',
    worker,
    admin: prepared.admin,
    // The device role's virtual servers bind their own ports when a declaration is deployed: worker 1 alone runs it.
    roles: worker === 1 ? config.roles : config.roles.filter((role) => role !== cl.SINGLE_WORKER_ROLE),
    allRoles: config.roles,
    ports: prepared.ports,
  });
  const fork = (number: number): WorkerHandle => forkWorker(() => startOf(number), io.env);
  const stopLimitMs = config.shutdownDrainMs + config.shutdownTimeoutMs + 5_000;
  const supervisor = superviseWorkers({
    count: config.workers,
    fork,
    timers: systemTimers,
    clock: systemClock,
    log: logger,
    stopTimeoutMs: stopLimitMs,
    maxRestartDelayMs: config.workerRestartMaxDelayMs,
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping every worker');
    const drained = await supervisor.stop();
    io.stdout.write('Portolan stopped.\n');
    process.exit(drained ? 0 : 1);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const outcome = await supervisor.started;
  if (!outcome.ok) {
    stopping = true;
    io.stderr.write(`${outcome.line}\n`);
    await supervisor.stop();
    logger.flush?.();
    return 2;
  }
  logger.info({ workers: config.workers, pids: Object.fromEntries(supervisor.pids()) }, 'every worker is running');
  io.stdout.write(startBanner(outcome.roles, { docs: config.referencePages, workers: config.workers }));
  return 0;
}

/** Forks one worker on node:cluster; it is sent its start when it asks for it (its listener is on then). */
function forkWorker(start: () => WorkerStartMessage, env: NodeJS.ProcessEnv): WorkerHandle {
  const worker: Worker = cluster.fork(env);
  closeHandoffsOnExit(worker);
  const reports: ((report: WorkerReport) => void)[] = [];
  // A message to a worker that has just died fails: its exit is what counts.
  worker.on('error', () => undefined);
  worker.on('message', (message: unknown) => {
    if ((message as WorkerHello | undefined)?.type === 'portolan:hello') worker.send(start());
    else if (isReport(message)) for (const listener of reports) listener(message);
  });
  return {
    pid: worker.process.pid,
    onExit: (listener) => void worker.on('exit', (code: number | null, signal: string | null) => listener(code, signal)),
    onReport: (listener) => void reports.push(listener),
    kill: (signal) => void worker.process.kill(signal),
  };
}

/** A worker: asks the primary for its start, runs every role it is given, drains and exits on SIGTERM. */
export async function startWorker(io: Io): Promise<number> {
  const [
    { loadConfig },
    { createLogger },
    { systemClock },
    { systemTimers },
    { startSystem },
    { explainStartFailure },
    { compactWhenIdle },
  ] = await Promise.all([
    import('../app/config.ts'),
    import('../lib/logger.ts'),
    import('../lib/clock.ts'),
    import('../lib/timers.ts'),
    import('../app/system.ts'),
    import('./failures.ts'),
    import('./idle-compaction.ts'),
  ]);
  const report = (message: WorkerReport) => process.send?.(message);
  let system: Awaited<ReturnType<typeof startSystem>> | undefined;
  let stopping = false;
  // Ctrl-C reaches every process of the terminal's group: the primary's SIGTERM is what stops a worker.
  process.on('SIGINT', () => undefined);
  const start = await new Promise<WorkerStartMessage>((resolve) => {
    process.on('message', (message: unknown) => {
      if ((message as WorkerStartMessage | undefined)?.type === 'portolan:start') resolve(message as WorkerStartMessage);
    });
    process.send?.({ type: 'portolan:hello' } satisfies WorkerHello);
  });
  const config = loadConfig(io.env, { roles: [...start.roles], ports: start.ports });
  const logger = createLogger({ level: config.logLevel, format: config.logFormat }).child({ worker: start.worker });
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (!system) process.exit(0); // still starting: nothing to drain
    logger.info({ signal: 'SIGTERM' }, 'stopping');
    await system.stop({ drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs });
    logger.flush?.();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  try {
    system = await startSystem(config, { logger, clock: systemClock, worker: { admin: start.admin, roles: start.allRoles } });
  } catch (error) {
    const line = explainStartFailure(error, config.database);
    if (line === undefined) logger.error({ err: error }, 'worker could not start');
    logger.flush?.();
    report({
      type: 'portolan:failed',
      line: line ?? `Worker ${start.worker} could not start: ${firstLine(error)} (its log has the details).`,
    });
    return 2;
  }
  compactWhenIdle({ timers: systemTimers });
  const roles: BannerRole[] = system.roles.map(({ role, url }) => ({ role, url }));
  report({ type: 'portolan:ready', roles });
  return 0;
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0];
