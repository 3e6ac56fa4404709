import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { createJobQueue, createJobWorker, type JobWorker } from '../../stores/job-queue.ts';
import { createSqlDeclarationStore, type StoredTask } from './declaration-store.ts';

/** The job queue of asynchronous deployments (`POST /declare?async=true`). */
export const APPSVCS_QUEUE = 'appsvcs-tasks';

/** A task's job id: ordered by the task's creation (the queue takes the oldest first), then its id. */
export const taskJobId = (order: number, taskId: string) => `appsvcs-${String(order).padStart(20, '0')}-${taskId}`;

/** A task whose runs all ended without an outcome (their processes died, or its run kept failing) is given up. */
const MAX_ATTEMPTS = 3;
/** Task records looked at for a missing job at start (the service keeps 100 finished ones, and at most 100 queued). */
const MAX_ADOPTED = 200;
/** Finished job rows are kept this long (the task records are the declaration store's). */
const RETAIN_FINISHED_MS = 60 * 60 * 1000;

export type DeployTasksOptions = {
  db: Database;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** This process's identity as a job worker (unique per process start). */
  owner: string;
  /** A claimed task is this process's until this long after its last renewal (the device lease's length). */
  leaseMs: number;
  /** Runs task `taskId` to its outcome (recorded by the run itself); throws when it could not (tried again). */
  run(taskId: string, signal: AbortSignal): Promise<void>;
  /** Records task `taskId` failed once given up (at least once). */
  giveUp(taskId: string, reason: string): Promise<void>;
};

/**
 * The device's queued deployments on the job port (src/stores/job-queue.ts): a task's record (`in
 * progress`) and its job are written in one transaction, by any process of the pair; only the active one
 * runs a worker, one task at a time, oldest first. A task whose runner died is claimed again by the next
 * active process once its lease lapsed; the run itself makes a second run a no-op (a finished record is
 * never finished again: DeclarationStore.finishTask).
 */
export function createDeployTasks(options: DeployTasksOptions) {
  const { db, clock, timers, logger, owner, leaseMs } = options;
  const jobs = createJobQueue(db, { clock });
  let worker: JobWorker | undefined;

  return {
    /** Saves a queued task's record and its job together; the local worker (if any) looks at once. */
    async enqueue(task: StoredTask): Promise<void> {
      await db.transaction(async (tx) => {
        await createSqlDeclarationStore(tx).putTask(task);
        await jobs.enqueue(APPSVCS_QUEUE, { taskId: task.id }, { id: taskJobId(task.order, task.id), tx });
      });
      worker?.poke();
    },

    /**
     * Starts running queued tasks (the active process). A task queued before tasks had jobs (saved by an
     * earlier version) gets its job first.
     */
    async start(): Promise<void> {
      if (worker) return;
      for (const task of await createSqlDeclarationStore(db).listTasks(MAX_ADOPTED)) {
        if (task.state !== 'in progress' || (await jobs.get(taskJobId(task.order, task.id)))) continue;
        await jobs.enqueue(APPSVCS_QUEUE, { taskId: task.id }, { id: taskJobId(task.order, task.id) });
        logger.info({ task: task.id }, 'a queued deployment task without its job was put on the job queue');
      }
      if (worker) return;
      worker = createJobWorker<{ taskId: string }>({
        db,
        queue: APPSVCS_QUEUE,
        clock,
        timers,
        owner,
        leaseMs,
        pollMs: Math.max(50, Math.floor(leaseMs / 4)),
        maxAttempts: MAX_ATTEMPTS,
        run: (job, { signal }) => options.run(job.payload.taskId, signal),
        giveUp: (job, reason) => options.giveUp(job.payload.taskId, reason),
        retainFinishedMs: RETAIN_FINISHED_MS,
        logger,
      });
      worker.start();
    },

    /** Stops at once: a task under way is signalled and, unless it finished, goes back to the queue. */
    async stop(): Promise<void> {
      const stopping = worker;
      worker = undefined;
      await stopping?.stop({ graceMs: 0 });
    },
  };
}

export type DeployTasks = ReturnType<typeof createDeployTasks>;
