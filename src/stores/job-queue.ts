import { randomUUID } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Cancel, Timers } from '../lib/timers.ts';
import type { Database, DatabaseEngine, Migration } from './database.ts';
import { startJobRetention } from './job-retention.ts';

/**
 * Background jobs with leases, in one `jobs` table of the SQL store (both engines): a job survives a
 * restart, and two processes never run the same job at once.
 *
 * - Claim: in one transaction, a worker takes the oldest claimable job of its queue: `queued` and due
 *   (`run_after_ms <= now`), or `running` with a lapsed lease held by another owner (a worker never
 *   re-claims its own lapsed job: it may still be running it). The job becomes `running`, leased to the
 *   worker until now + leaseMs, and `attempts` (the number of claims) grows by one. PostgreSQL picks with
 *   `FOR UPDATE SKIP LOCKED`, so concurrent workers take different jobs; SQLite has one writer at a time.
 * - Lease: renewed every leaseMs/3 while the job runs. Renewing, finishing and failing are fenced:
 *   they change the row only while it is `running` under this owner and this claim (`attempts`). A renewal
 *   that changes nothing means another worker took the job: the run's signal is aborted and whatever it
 *   does next is not recorded.
 * - Outcome: run() resolves -> `done` (the row stays, with `finished_ms`). run() throws -> `queued` again
 *   after min(30 s, 1 s * 2^(attempts-1)), with the message (first 500 characters) in `last_error`; after
 *   `maxAttempts` attempts -> `failed`, and giveUp() is called. A job claimed while its attempts are
 *   already spent (its previous runs' processes stopped and their leases lapsed) is not run: it is given up.
 * - A graceful stop is no attempt: a run that stop() aborted (after its grace period) is `queued` again at
 *   once with its claim taken back (`attempts` one less), so rolling restarts never use a job's attempts up.
 *   A process that dies or hangs instead still uses one: its lease lapses and the next claim counts.
 * - giveUp() is called under the lease, before the job is marked `failed`: should this process stop in
 *   between, another worker calls it again. So it runs at least once; make it safe to repeat.
 * - Execution is at least once: a run whose outcome could not be recorded (a lost lease, the database
 *   down at that moment) is run again once its lease lapses.
 * All waiting uses the injected clock and timers (background timers: they never hold the process open).
 * A failing database is logged and polling goes on.
 */
export const JOB_MIGRATIONS: readonly Migration[] = [
  {
    version: 10,
    name: 'background jobs with leases',
    up: `CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  queue TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  run_after_ms BIGINT NOT NULL,
  lease_owner TEXT,
  lease_expires_ms BIGINT,
  last_error TEXT,
  created_ms BIGINT NOT NULL,
  finished_ms BIGINT
);
CREATE INDEX jobs_claim ON jobs (queue, state, run_after_ms);`,
  },
];

/**
 * A job as its worker sees it: `payload` is what was enqueued, through JSON (not validated: the queue's
 * code owns its shape); `attempts` counts the claims so far, this one included.
 */
export type Job<P = unknown> = { id: string; queue: string; payload: P; attempts: number; createdMs: number };
export type JobState = 'queued' | 'running' | 'done' | 'failed';
export type JobStatus = {
  id: string;
  queue: string;
  state: JobState;
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresMs: number | null;
  lastError: string | null;
};
export type JobQueueOptions = { clock: Clock };

type JobRow = {
  id: string;
  queue: string;
  payload: string;
  state: JobState;
  attempts: number;
  lease_owner: string | null;
  lease_expires_ms: number | null;
  last_error: string | null;
  created_ms: number;
};

const ERROR_LIMIT = 500;
const MAX_BACKOFF_MS = 30_000;
const BACKGROUND = { background: true } as const;

const CLAIMABLE = `SELECT id, queue, payload, attempts, created_ms, state FROM jobs
WHERE queue = $1 AND ((state = 'queued' AND run_after_ms <= $2) OR (state = 'running' AND lease_expires_ms <= $2 AND lease_owner <> $3))
ORDER BY run_after_ms, created_ms, id LIMIT 1`;
const PICK: Readonly<Record<DatabaseEngine, string>> = { sqlite: CLAIMABLE, postgres: `${CLAIMABLE} FOR UPDATE SKIP LOCKED` };
const CLAIM = `UPDATE jobs SET state = 'running', lease_owner = $2, lease_expires_ms = $3, attempts = attempts + 1 WHERE id = $1`;
// $1 id, $2 owner, $3 attempts at the claim: the fencing token of one lease.
const FENCE = `WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running'`;
const RENEW = `UPDATE jobs SET lease_expires_ms = $4 ${FENCE}`;
const RELEASE = 'lease_owner = NULL, lease_expires_ms = NULL';
const FINISH = `UPDATE jobs SET state = 'done', finished_ms = $4, ${RELEASE} ${FENCE}`;
const RETRY = `UPDATE jobs SET state = 'queued', run_after_ms = $4, last_error = $5, ${RELEASE} ${FENCE}`;
const FAIL = `UPDATE jobs SET state = 'failed', finished_ms = $4, last_error = $5, ${RELEASE} ${FENCE}`;
// Back to the queue as if this claim had not been made: its process is stopping, the job did nothing wrong.
const UNCLAIM = `UPDATE jobs SET state = 'queued', run_after_ms = $4, last_error = $5, attempts = attempts - 1, ${RELEASE} ${FENCE}`;

/** The reason stop() aborts a run with: the job is released without counting the attempt. */
export class WorkerStopping extends Error {
  override name = 'WorkerStopping';
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, ERROR_LIMIT);
const backoffMs = (attempts: number): number => Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempts - 1));

/**
 * Adds jobs and reads their state.
 *
 * @example
 * const jobs = createJobQueue(db, { clock });
 * await db.transaction(async (tx) => {
 *   await tx.execute('INSERT INTO snapshots (id) VALUES ($1)', [id]);
 *   await jobs.enqueue('snapshots', { id }, { tx }); // the job exists if and only if the snapshot does
 * });
 */
export function createJobQueue(db: Database, options: JobQueueOptions) {
  return {
    /**
     * Adds a job; pass `tx` (a Database handle inside the caller's transaction) to enqueue atomically with
     * the caller's own writes. `runAfterMs` (clock time, default now) is when it may run first. Returns the
     * id (given or generated).
     */
    async enqueue(
      queue: string,
      payload: unknown,
      enqueueOptions: { id?: string; tx?: Database; runAfterMs?: number } = {},
    ): Promise<string> {
      const id = enqueueOptions.id ?? randomUUID();
      const now = options.clock.nowMs();
      await (enqueueOptions.tx ?? db).execute(
        `INSERT INTO jobs (id, queue, payload, state, attempts, run_after_ms, created_ms) VALUES ($1, $2, $3, 'queued', 0, $4, $5)`,
        [id, queue, JSON.stringify(payload ?? null), enqueueOptions.runAfterMs ?? now, now],
      );
      return id;
    },
    /**
     * Removes the jobs of `queue` whose id starts with `idPrefix` that wait to run (a running one ends on
     * its own); pass `tx` to do it with the caller's own writes. Returns how many were removed.
     */
    async cancelQueued(queue: string, idPrefix: string, cancelOptions: { tx?: Database } = {}): Promise<number> {
      const { rowCount } = await (cancelOptions.tx ?? db).execute(
        "DELETE FROM jobs WHERE queue = $1 AND state = 'queued' AND SUBSTR(id, 1, $3) = $2",
        [queue, idPrefix, idPrefix.length],
      );
      return rowCount;
    },
    /** The ids of the jobs of `queue` that wait to run or are running. */
    async pendingIds(queue: string): Promise<string[]> {
      const rows = await db.query<{ id: string }>("SELECT id FROM jobs WHERE queue = $1 AND state IN ('queued', 'running')", [queue]);
      return rows.map((r) => r.id);
    },
    /** One job's state, for tests and diagnostics. */
    async get(id: string): Promise<JobStatus | undefined> {
      const [row] = await db.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
      if (!row) return undefined;
      const { queue, state, attempts, lease_owner, lease_expires_ms, last_error } = row;
      return { id, queue, state, attempts, leaseOwner: lease_owner, leaseExpiresMs: lease_expires_ms, lastError: last_error };
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;

export type JobWorkerOptions<P> = {
  db: Database;
  queue: string;
  clock: Clock;
  timers: Timers;
  /** This worker's identity (unique per process start, e.g. `${hostname}:${pid}:${randomUUID()}`). */
  owner: string;
  /** A claimed job is this worker's until clock.nowMs() + leaseMs; renewed every leaseMs/3 while it runs. */
  leaseMs: number;
  /** How often to look for work when idle. */
  pollMs: number;
  /** Jobs run at once by this worker (default 1). */
  concurrency?: number;
  /** A job claimed this many times without finishing is given up. */
  maxAttempts: number;
  /** Resolves: the job is done; throws: it is tried again later (with backoff) until maxAttempts. */
  run(job: Job<P>, context: { signal: AbortSignal }): Promise<void>;
  /** Called when a job is given up (see the module comment: at least once). Its errors are logged; the job still ends 'failed'. */
  giveUp(job: Job<P>, reason: string): Promise<void>;
  logger?: { warn(fields: object, msg: string): void; error(fields: object, msg: string): void };
  /** Finished (done or failed) jobs of the queue are purged this long after they ended (job-retention.ts); default: kept. */
  retainFinishedMs?: number;
};

type Claim<P> = { job: Job<P>; lapsed: boolean };
type Outcome = { state: 'done' } | { state: 'queued' | 'failed' | 'released'; error: string } | { state: 'lost' };
type Hold = { controller: AbortController; done: Promise<void> };

/**
 * Runs the jobs of one queue: claims up to `concurrency` at a time, looks again every `pollMs` when idle
 * (or at once after `poke()`, and whenever a job ends).
 *
 * @example
 * const worker = createJobWorker({ db, queue: 'snapshots', clock, timers, owner, leaseMs: 60_000, pollMs: 2_000,
 *   maxAttempts: 5, run: processSnapshot, giveUp: markSnapshotFailed, logger });
 * worker.start();
 * await worker.stop(); // on shutdown
 */
export function createJobWorker<P>(options: JobWorkerOptions<P>) {
  const { db, queue, clock, timers, owner, leaseMs, pollMs, maxAttempts, logger } = options;
  const concurrency = options.concurrency ?? 1;
  for (const [name, value] of Object.entries({ leaseMs, pollMs, concurrency, maxAttempts })) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`The job worker's ${name} must be a whole number from 1 (got ${value}).`);
  }
  const renewEveryMs = Math.max(1, Math.floor(leaseMs / 3));
  const holds = new Set<Hold>();
  let started = false;
  let stopping = false;
  let pollTimer: Cancel | undefined;
  let filling: Promise<void> | undefined;
  let pokedWhileFilling = false;
  let stopRetention: Cancel = () => undefined;

  const claim = (): Promise<Claim<P> | 'unreadable' | undefined> =>
    // Read committed is safe here: the picked row is locked (FOR UPDATE) until the claim commits.
    db.transaction(
      async (tx) => {
        const now = clock.nowMs();
        const [row] = await tx.query<JobRow>(PICK[tx.engine], [queue, now, owner]);
        if (!row) return undefined;
        let payload: P;
        try {
          payload = JSON.parse(row.payload) as P;
        } catch {
          // Only a hand-edited row gets here; it must not stop the queue behind it (claims take the oldest first).
          await tx.execute(`UPDATE jobs SET state = 'failed', finished_ms = $2, last_error = $3, ${RELEASE} WHERE id = $1`, [
            row.id,
            now,
            'the payload is not JSON',
          ]);
          logger?.error({ queue, jobId: row.id }, 'a background job whose payload is not JSON was failed without running');
          return 'unreadable';
        }
        await tx.execute(CLAIM, [row.id, owner, now + leaseMs]);
        const job: Job<P> = { id: row.id, queue: row.queue, payload, attempts: row.attempts + 1, createdMs: row.created_ms };
        return { job, lapsed: row.state === 'running' };
      },
      { isolation: 'read-committed' },
    );

  /** giveUp() under the lease; its failure is logged, and the job ends failed anyway. */
  const giveUpWith = async (job: Job<P>, reason: string): Promise<Outcome> => {
    try {
      await options.giveUp(job, reason);
    } catch (error) {
      logger?.error({ queue, jobId: job.id, error: messageOf(error) }, 'giving up a background job failed; it is marked failed anyway');
    }
    return { state: 'failed', error: reason };
  };

  const attempt = async ({ job, lapsed }: Claim<P>, signal: AbortSignal, isLost: () => boolean): Promise<Outcome> => {
    if (job.attempts > maxAttempts) {
      const why = lapsed ? 'the process running the last one stopped before it finished (its lease lapsed)' : 'no attempts were left';
      return giveUpWith(job, `given up after ${job.attempts - 1} attempts (at most ${maxAttempts}): ${why}`);
    }
    try {
      await options.run(job, { signal });
      return { state: 'done' };
    } catch (error) {
      if (isLost()) return { state: 'lost' }; // the worker that holds the job now decides
      const message = messageOf(error);
      if (signal.reason instanceof WorkerStopping) return { state: 'released', error: message };
      if (job.attempts < maxAttempts) return { state: 'queued', error: message };
      return giveUpWith(job, `given up after ${job.attempts} attempts (at most ${maxAttempts}): ${message}`.slice(0, ERROR_LIMIT));
    }
  };

  /** Runs one claimed job while renewing its lease, then records the outcome, fenced by the lease. */
  const hold = async (claimed: Claim<P>, controller: AbortController): Promise<void> => {
    const { job } = claimed;
    const fence = [job.id, owner, job.attempts];
    const fields = { queue, jobId: job.id, attempts: job.attempts };
    let lost = false;
    let ended = false;
    let cancelRenewal: Cancel = () => undefined;
    const renew = async (): Promise<void> => {
      try {
        const { rowCount } = await db.execute(RENEW, [...fence, clock.nowMs() + leaseMs]);
        if (ended) return;
        if (rowCount === 0) {
          lost = true;
          controller.abort(new Error('The lease on this job was lost: another worker has taken it.'));
          return;
        }
      } catch (error) {
        logger?.warn({ ...fields, error: messageOf(error) }, 'renewing a background job lease failed; trying again');
      }
      if (!ended) cancelRenewal = timers.after(renewEveryMs, () => void renew(), BACKGROUND);
    };
    cancelRenewal = timers.after(renewEveryMs, () => void renew(), BACKGROUND);

    let outcome: Outcome;
    try {
      outcome = await attempt(claimed, controller.signal, () => lost);
    } finally {
      ended = true;
      cancelRenewal();
    }
    if (lost || outcome.state === 'lost') {
      logger?.warn(fields, 'a background job lease was lost while it ran; its outcome is not recorded');
      return;
    }
    const now = clock.nowMs();
    const { rowCount } =
      outcome.state === 'done'
        ? await db.execute(FINISH, [...fence, now])
        : outcome.state === 'queued'
          ? await db.execute(RETRY, [...fence, now + backoffMs(job.attempts), outcome.error])
          : outcome.state === 'released'
            ? await db.execute(UNCLAIM, [...fence, now, outcome.error])
            : await db.execute(FAIL, [...fence, now, outcome.error]);
    if (rowCount === 0) logger?.warn(fields, 'a background job lease lapsed before its outcome was recorded; another worker will run it');
  };

  const startHold = (claimed: Claim<P>): void => {
    const controller = new AbortController();
    const entry: Hold = {
      controller,
      done: hold(claimed, controller)
        .catch((error: unknown) =>
          logger?.error(
            { queue, jobId: claimed.job.id, error: messageOf(error) },
            'recording a background job outcome failed; it will run again',
          ),
        )
        .finally(() => {
          holds.delete(entry);
          poke();
        }),
    };
    holds.add(entry);
  };

  /** Claims jobs while there is room; never rejects. */
  const fill = async (): Promise<void> => {
    try {
      while (!stopping && holds.size < concurrency) {
        const claimed = await claim();
        if (!claimed) return;
        if (claimed !== 'unreadable') startHold(claimed);
      }
    } catch (error) {
      logger?.error({ queue, error: messageOf(error) }, 'looking for background jobs failed; trying again later');
    }
  };

  function poke(): void {
    if (!started || stopping) return;
    if (filling) {
      pokedWhileFilling = true;
      return;
    }
    pollTimer?.();
    pollTimer = undefined;
    filling = fill().finally(() => {
      filling = undefined;
      if (pokedWhileFilling) {
        pokedWhileFilling = false;
        poke();
      } else if (!stopping) {
        pollTimer = timers.after(pollMs, poke, BACKGROUND);
      }
    });
  }

  return {
    start(): void {
      if (started) return;
      started = true;
      if (options.retainFinishedMs !== undefined)
        stopRetention = startJobRetention({ db, queue, clock, timers, retainMs: options.retainFinishedMs, ...(logger ? { logger } : {}) });
      poke();
    },
    /** Look for work now (after an enqueue in this process). */
    poke,
    /**
     * Stops claiming; waits for running jobs (their signal is aborted after `graceMs`, default 5000, on the injected timers,
     * with a WorkerStopping reason: a run that then throws goes back to the queue with its attempt not counted).
     */
    async stop(stopOptions: { graceMs?: number } = {}): Promise<void> {
      stopping = true;
      stopRetention();
      pollTimer?.();
      pollTimer = undefined;
      await filling;
      if (holds.size === 0) return;
      const abortAll = timers.after(
        stopOptions.graceMs ?? 5000,
        () => {
          for (const h of holds) h.controller.abort(new WorkerStopping('The job worker is stopping.'));
        },
        BACKGROUND,
      );
      await Promise.all([...holds].map((h) => h.done));
      abortAll();
    },
  };
}

export type JobWorker = ReturnType<typeof createJobWorker>;
