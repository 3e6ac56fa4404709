import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { createJobQueue, createJobWorker, type JobWorker } from '../../stores/job-queue.ts';
import type { SnapshotProcessor } from './processing.ts';
import { DEFAULT_SNAPSHOT_MAX_ATTEMPTS } from './settings.ts';
import { jobIdPrefix, PROCESSING_QUEUE, snapshotStore as store } from './snapshot-store.ts';

export type ProcessingQueueOptions = {
  db: Database;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** This process's identity as a job worker (unique per process start). */
  owner: string;
  /** The lease of a processing job (renewed while it runs). */
  leaseMs: number;
  /** Jobs this process runs at once (0: none; processes on the same store and data dir do). */
  concurrency: number;
  /** A job whose thread or process crashed (or lease lapsed) this many times ends ERROR (default DEFAULT_SNAPSHOT_MAX_ATTEMPTS). */
  maxAttempts?: number | undefined;
  /** Finished jobs are purged this long after they ended (default: kept). */
  jobRetentionMs?: number | undefined;
  /** What a job does: process (or evaluate again) its snapshot, or end it ERROR once given up. */
  processor: Pick<SnapshotProcessor, 'run' | 'giveUp'>;
};

/**
 * The processing jobs of snapshots on the job port: one job per snapshot to process or evaluate again (its
 * id names the snapshot: jobIdPrefix), a queued or interrupted job survives a restart, and this process's
 * worker runs at most `concurrency` of them.
 *
 * @example
 * const queue = createProcessingQueue({ db, clock, timers, logger, owner, leaseMs, concurrency: 2, processor });
 * await db.transaction((tx) => queue.enqueue(tx, '7'));
 * queue.start();
 */
export function createProcessingQueue(options: ProcessingQueueOptions) {
  const { db, clock, timers, logger, owner, leaseMs } = options;
  const jobs = createJobQueue(db, { clock });
  let worker: JobWorker | undefined;

  const enqueue = (tx: Database, id: string) => jobs.enqueue(PROCESSING_QUEUE, { id }, { id: `${jobIdPrefix(id)}${randomUUID()}`, tx });

  return {
    /** Queues the processing of snapshot `id` in `tx` (the transaction that saves or changes it). */
    enqueue,

    /** Cancels the waiting job of snapshot `id`, in `tx` (the transaction that deletes it). */
    cancel: (tx: Database, id: string) => jobs.cancelQueued(PROCESSING_QUEUE, jobIdPrefix(id), { tx }),

    /**
     * Queues again the processed snapshots whose diagnostics come from another rule set version than
     * `rulesVersion`, but not those a job is about to evaluate already; how many were queued.
     */
    async requeueStale(rulesVersion: string): Promise<number> {
      const pending = await jobs.pendingIds(PROCESSING_QUEUE);
      const stale = (await store.staleIds(db, rulesVersion)).filter((id) => !pending.some((job) => job.startsWith(jobIdPrefix(id))));
      if (stale.length === 0) return 0;
      await db.transaction(async (tx) => {
        for (const id of stale) await enqueue(tx, id);
      });
      logger.info({ snapshots: stale.length, rulesVersion }, 'snapshots queued to be evaluated with the new rule set');
      return stale.length;
    },

    /** Starts this process's worker (none at concurrency 0: this process takes uploads and answers, others process them). */
    start(): void {
      if (worker || options.concurrency === 0) return;
      worker = createJobWorker<{ id: string }>({
        db,
        queue: PROCESSING_QUEUE,
        clock,
        timers,
        owner,
        leaseMs,
        pollMs: Math.min(1000, Math.max(50, Math.floor(leaseMs / 4))),
        concurrency: options.concurrency,
        maxAttempts: options.maxAttempts ?? DEFAULT_SNAPSHOT_MAX_ATTEMPTS,
        run: (job, { signal }) => options.processor.run(job.payload.id, signal),
        ...(options.jobRetentionMs === undefined ? {} : { retainFinishedMs: options.jobRetentionMs }),
        giveUp: (job, reason) => options.processor.giveUp(job.payload.id, reason),
        logger,
      });
      worker.start();
    },

    /** Whether this process's worker runs (started, not stopped). */
    isRunning: (): boolean => worker !== undefined,

    /** Tells the worker a job was queued (it takes it at once instead of at its next poll). */
    poke(): void {
      worker?.poke();
    },

    /**
     * Stops taking jobs; a job under way is signalled at once and, unless it finishes, taken up again after the
     * restart without using one of its attempts (the job port's graceful stop).
     */
    async stop(): Promise<void> {
      const stopping = worker;
      worker = undefined;
      await stopping?.stop({ graceMs: 0 });
    },
  };
}

export type ProcessingQueue = ReturnType<typeof createProcessingQueue>;
