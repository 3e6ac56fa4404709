import type { Clock } from '../lib/clock.ts';
import type { Cancel, Timers } from '../lib/timers.ts';
import type { Database } from './database.ts';

/** The purge runs at most this far apart (and once at start), so a long retention still purges daily. */
const MAX_PURGE_INTERVAL_MS = 24 * 3600 * 1000;

/**
 * Deletes the jobs of `queue` that ended (`done` or `failed`) at or before `endedBeforeMs`: the jobs
 * table keeps a row per job ever run, and without this it grows with every upload or deployment.
 * Waiting and running jobs are never touched. Returns how many were deleted.
 *
 * @example
 * await purgeFinishedJobs(db, 'snapshot-processing', clock.nowMs() - 7 * 86_400_000);
 */
export async function purgeFinishedJobs(db: Database, queue: string, endedBeforeMs: number): Promise<number> {
  const { rowCount } = await db.execute("DELETE FROM jobs WHERE queue = $1 AND state IN ('done', 'failed') AND finished_ms <= $2", [
    queue,
    endedBeforeMs,
  ]);
  return rowCount;
}

export type JobRetentionOptions = {
  db: Database;
  queue: string;
  clock: Clock;
  timers: Timers;
  /** A finished job is kept this long after it ended. */
  retainMs: number;
  logger?: { warn(fields: object, msg: string): void };
};

/**
 * Purges the queue's finished jobs older than `retainMs` now and then every min(retainMs, 1 day) on the
 * injected timers (background: they never hold the process open). Returns what stops it.
 *
 * @example
 * const stop = startJobRetention({ db, queue, clock, timers, retainMs: 7 * 86_400_000 });
 * stop(); // on shutdown
 */
export function startJobRetention(options: JobRetentionOptions): Cancel {
  const { db, queue, clock, timers, retainMs } = options;
  const everyMs = Math.max(1, Math.min(retainMs, MAX_PURGE_INTERVAL_MS));
  let stopped = false;
  let cancel: Cancel = () => undefined;
  const purge = async () => {
    try {
      await purgeFinishedJobs(db, queue, clock.nowMs() - retainMs);
    } catch (error) {
      options.logger?.warn({ queue, error: (error as Error).message }, 'purging finished background jobs failed; trying again later');
    }
    if (!stopped) cancel = timers.after(everyMs, () => void purge(), { background: true });
  };
  void purge();
  return () => {
    stopped = true;
    cancel();
  };
}
