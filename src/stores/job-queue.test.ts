// The job port's behaviour, written once and run on each engine. Time is a fake clock that moves only
// when a test moves it; `until` waits for database I/O, never for time to pass.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createFakeClock, hasSettled } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import type { Timers } from '../lib/timers.ts';
import type { Database, TransactionOptions } from './database.ts';
import { DatabaseError } from './database-error.ts';
import { createJobQueue, createJobWorker, JOB_MIGRATIONS, type Job, type JobWorkerOptions } from './job-queue.ts';
import { openDatabase } from './open-database.ts';
import { withTestPostgres, withTestSchema } from './test-postgres.ts';

const LEASE_MS = 30_000;
const POLL_MS = 1_000;
type Payload = { n: number };

/** Waits for I/O (the clock does not move) until `check` holds; fails rather than hang if it never does. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await check()) return;
    await sleep(5);
  }
  throw new Error(`still waiting until ${what}`);
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The database as the workers see it, counting their claim transactions: `lookedSince(mark)` waits until a
 * claim that began after `mark()` has ended, that is, until the worker has looked for work since then.
 */
function watched(db: Database, failFirst = 0) {
  let begun = 0;
  const ended: number[] = [];
  const transaction = async <T>(work: (tx: Database) => Promise<T>, options?: TransactionOptions): Promise<T> => {
    const seq = ++begun;
    try {
      if (seq <= failFirst) throw new DatabaseError('unavailable', db.engine, 'The database cannot be reached (test).');
      return await db.transaction(work, options);
    } finally {
      ended.push(seq);
    }
  };
  return {
    db: { ...db, transaction } satisfies Database,
    mark: () => begun,
    lookedSince: (mark: number) => until(() => ended.some((seq) => seq > mark), 'the worker has looked for work'),
  };
}

/** The suite, run on each engine; `url` gives a fresh, empty database per test. */
function runJobSuite(t: TapTest, url: (t: TapTest) => Promise<string>) {
  const setUp = async (t: TapTest, options: { failFirst?: number } = {}) => {
    const base = await openDatabase(await url(t), { migrations: JOB_MIGRATIONS });
    t.teardown(() => base.close());
    const clock = createFakeClock();
    const logs: string[] = [];
    const logger = { warn: (_: object, msg: string) => void logs.push(msg), error: (_: object, msg: string) => void logs.push(msg) };
    const watch = watched(base, options.failFirst);
    const jobs = createJobQueue(base, { clock });
    // Runs that never end by themselves end when the test does, so that their workers can stop.
    const hung: Array<() => void> = [];
    const hang = (signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        hung.push(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason as Error));
      });
    const startWorker = (options: Partial<JobWorkerOptions<Payload>> & Pick<JobWorkerOptions<Payload>, 'run'>) => {
      const worker = createJobWorker<Payload>({
        db: watch.db,
        queue: 'q',
        clock,
        timers: clock,
        owner: 'A',
        leaseMs: LEASE_MS,
        pollMs: POLL_MS,
        maxAttempts: 3,
        giveUp: async () => undefined,
        logger,
        ...options,
      });
      worker.start();
      t.teardown(async () => {
        for (const release of hung) release();
        await worker.stop({ graceMs: 0 });
      });
      return worker;
    };
    const runAfterMs = async (id: string) =>
      Number((await base.query('SELECT run_after_ms FROM jobs WHERE id = $1', [id]))[0]?.run_after_ms);
    return { db: base, clock, logs, watch, jobs, hang, startWorker, runAfterMs };
  };
  /** Timers that never fire: a worker on them never renews its lease nor polls by itself (a process that hangs or died). */
  const frozen = (): Timers => createFakeClock();

  t.test('an enqueued job runs once, with its payload, and ends done', async (t) => {
    const { clock, jobs, startWorker, db } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 7 });
    const runs: Job<Payload>[] = [];
    startWorker({ run: async (job) => void runs.push(job) });
    await until(async () => (await jobs.get(id))?.state === 'done', 'the job is done');
    t.same(runs, [{ id, queue: 'q', payload: { n: 7 }, attempts: 1, createdMs: clock.nowMs() }]);
    t.same(await jobs.get(id), { id, queue: 'q', state: 'done', attempts: 1, leaseOwner: null, leaseExpiresMs: null, lastError: null });
    t.same(await db.query('SELECT finished_ms FROM jobs'), [{ finished_ms: clock.nowMs() }], 'the row is kept, with when it finished');
  });

  t.test('a job enqueued inside a transaction exists only if that transaction commits', async (t) => {
    const { db, jobs } = await setUp(t);
    await t.rejects(
      db.transaction(async (tx) => {
        await jobs.enqueue('q', { n: 1 }, { tx, id: 'rolled-back' });
        throw new Error('the caller changed its mind');
      }),
      /changed its mind/,
    );
    t.equal(await jobs.get('rolled-back'), undefined);
    await db.transaction((tx) => jobs.enqueue('q', { n: 2 }, { tx, id: 'committed' }));
    t.match(await jobs.get('committed'), { state: 'queued', attempts: 0, leaseOwner: null });
  });

  t.test('queued jobs are cancelled by id prefix, exactly (no wildcard), and listed while pending', async (t) => {
    const { jobs } = await setUp(t);
    for (const id of ['snapshot-1-a', 'snapshot-12-b', 'snapshot_1-c', 'snapshot-1-d']) await jobs.enqueue('q', { n: 1 }, { id });
    await jobs.enqueue('other', { n: 1 }, { id: 'snapshot-1-e' });
    t.equal(await jobs.cancelQueued('q', 'snapshot-1-'), 2);
    t.same((await jobs.pendingIds('q')).sort(), ['snapshot-12-b', 'snapshot_1-c'], "'_' is no wildcard, 'snapshot-12-' is another prefix");
    t.same(await jobs.pendingIds('other'), ['snapshot-1-e'], 'another queue is untouched');
  });

  t.test('a job enqueued for later is not run before its time', async (t) => {
    const { clock, jobs, watch, startWorker } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 }, { runAfterMs: clock.nowMs() + 5_000 });
    const runs: string[] = [];
    const worker = startWorker({ run: async (job) => void runs.push(job.id) });
    clock.advance(4_999);
    const mark = watch.mark();
    worker.poke();
    await watch.lookedSince(mark);
    t.same(runs, [], 'not at 4999 ms');
    clock.advance(1);
    worker.poke();
    await until(() => runs.length === 1, 'the job runs');
    t.same(runs, [id]);
  });

  t.test('two workers share 20 jobs: each job runs exactly once, never twice at the same time', async (t) => {
    const { db, jobs, startWorker } = await setUp(t);
    for (let n = 0; n < 20; n++) await jobs.enqueue('q', { n });
    const runs = new Map<number, number>();
    const running = new Set<number>();
    const byWorker = { A: 0, B: 0 };
    let overlaps = 0;
    // A's jobs wait until B has one too: both workers get work however slowly B's first claim comes
    // (on PostgreSQL it may need a new connection of the pool), so the check below is not about speed.
    const bStarted = deferred();
    const runAs = (owner: 'A' | 'B') => async (job: Job<Payload>) => {
      if (running.has(job.payload.n)) overlaps++;
      running.add(job.payload.n);
      runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1);
      byWorker[owner]++;
      if (owner === 'B') bStarted.resolve();
      else await bStarted.promise;
      await sleep(1); // long enough for the other worker to claim meanwhile
      running.delete(job.payload.n);
    };
    startWorker({ owner: 'A', concurrency: 3, run: runAs('A') });
    startWorker({ owner: 'B', concurrency: 3, run: runAs('B') });
    await until(() => runs.size === 20 && running.size === 0, 'every job has run');
    t.same(
      [...runs.entries()].sort((a, b) => a[0] - b[0]),
      Array.from({ length: 20 }, (_, n) => [n, 1]),
      'each job ran once',
    );
    t.equal(overlaps, 0);
    t.ok(byWorker.A > 0 && byWorker.B > 0, `both workers ran jobs (A ${byWorker.A}, B ${byWorker.B})`);
    const done = async () => Number((await db.query("SELECT COUNT(*) AS n FROM jobs WHERE state = 'done' AND attempts = 1"))[0]?.n);
    await until(async () => (await done()) === 20, 'every job is done, at its first attempt');
  });

  t.test('a job whose lease lapsed is claimed by another worker, not before, and its attempts grow', async (t) => {
    const { clock, jobs, watch, startWorker, hang } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    const startedA = deferred();
    startWorker({ owner: 'A', timers: frozen(), run: () => (startedA.resolve(), hang()) });
    await startedA.promise;
    t.match(await jobs.get(id), { state: 'running', attempts: 1, leaseOwner: 'A', leaseExpiresMs: clock.nowMs() + LEASE_MS });

    const runsB: Job<Payload>[] = [];
    const workerB = startWorker({ owner: 'B', run: async (job) => void runsB.push(job) });
    clock.advance(LEASE_MS - 1);
    const mark = watch.mark();
    workerB.poke();
    await watch.lookedSince(mark);
    t.same(runsB, [], 'the lease still holds 1 ms before it ends');
    clock.advance(1);
    workerB.poke();
    await until(async () => (await jobs.get(id))?.state === 'done', 'B has run the job');
    t.match(runsB, [{ id, attempts: 2 }]);
    t.match(await jobs.get(id), { state: 'done', attempts: 2 });
  });

  t.test('a running job keeps its lease: renewed every leaseMs/3, so no other worker takes it', async (t) => {
    const { clock, jobs, watch, startWorker, hang } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    const started = deferred();
    startWorker({ owner: 'A', run: () => (started.resolve(), hang()) });
    await started.promise;
    const claimedAt = clock.nowMs();
    clock.advance(LEASE_MS / 3);
    await until(async () => (await jobs.get(id))?.leaseExpiresMs === claimedAt + LEASE_MS / 3 + LEASE_MS, 'the lease is renewed');
    clock.advance(LEASE_MS / 3);
    await until(
      async () => (await jobs.get(id))?.leaseExpiresMs === claimedAt + (2 * LEASE_MS) / 3 + LEASE_MS,
      'the lease is renewed again',
    );

    const runsB: string[] = [];
    const workerB = startWorker({ owner: 'B', run: async (job) => void runsB.push(job.id) });
    clock.advance(LEASE_MS / 3 + 1); // past the first lease, which would have lapsed without renewals
    const mark = watch.mark();
    workerB.poke();
    await watch.lookedSince(mark);
    t.same(runsB, []);
    t.match(await jobs.get(id), { state: 'running', attempts: 1, leaseOwner: 'A' });
  });

  t.test('fencing: a worker whose lease was taken has its late finish ignored', async (t) => {
    const { clock, jobs, logs, startWorker, hang } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    const startedA = deferred();
    const finishA = deferred();
    startWorker({ owner: 'A', timers: frozen(), run: () => (startedA.resolve(), finishA.promise) });
    await startedA.promise;
    clock.advance(LEASE_MS);
    const startedB = deferred();
    startWorker({ owner: 'B', run: () => (startedB.resolve(), hang()) });
    await startedB.promise;

    finishA.resolve(); // A, which never noticed it lost the job, reports it done
    const recorded = async () =>
      logs.some((m) => /lapsed before its outcome was recorded/.test(m)) || (await jobs.get(id))?.state !== 'running';
    await until(recorded, 'A has tried to record its outcome');
    t.match(await jobs.get(id), { state: 'running', attempts: 2, leaseOwner: 'B' }, 'the job is still B’s, not done');
  });

  t.test('fencing: a worker whose lease was taken has its run aborted at its next renewal, and its failure ignored', async (t) => {
    const { clock, jobs, logs, startWorker, hang } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    const timersA = createFakeClock();
    let signalA: AbortSignal | undefined;
    startWorker({ owner: 'A', timers: timersA, run: (_, { signal }) => ((signalA = signal), hang(signal)) });
    await until(() => signalA !== undefined, 'A runs the job');
    clock.advance(LEASE_MS);
    const startedB = deferred();
    startWorker({ owner: 'B', timers: frozen(), run: () => (startedB.resolve(), hang()) });
    await startedB.promise;

    t.notOk(signalA?.aborted);
    timersA.advance(LEASE_MS / 3); // A's renewal finds the job is no longer its own
    await until(() => signalA?.aborted === true, 'A’s run is aborted');
    t.match(String(signalA?.reason), /lease on this job was lost/);
    await until(() => logs.some((m) => /lease was lost while it ran/.test(m)), 'A has ended the job');
    t.match(await jobs.get(id), { state: 'running', attempts: 2, leaseOwner: 'B', lastError: null }, 'A did not send it back to the queue');
  });

  t.test('a worker never re-claims its own lapsed job (it may still be running it)', async (t) => {
    const { clock, jobs, startWorker, hang } = await setUp(t);
    const stuck = await jobs.enqueue('q', { n: 1 });
    const runsA: string[] = [];
    const workerA = startWorker({
      owner: 'A',
      timers: frozen(),
      concurrency: 2,
      run: (job) => (runsA.push(job.id), job.id === stuck ? hang() : Promise.resolve()),
    });
    await until(() => runsA.length === 1, 'A runs the first job');
    clock.advance(LEASE_MS);
    // A newer job: A, with a free slot, takes the oldest job it may claim, so it would take `stuck` first if it could.
    const fresh = await jobs.enqueue('q', { n: 2 });
    workerA.poke();
    await until(() => runsA.length === 2, 'A runs another job');
    t.same(runsA, [stuck, fresh], 'the newer one');
    await until(async () => (await jobs.get(fresh))?.state === 'done', 'the newer job is done');
    t.match(await jobs.get(stuck), { state: 'running', attempts: 1, leaseOwner: 'A' });

    const runsB: string[] = [];
    startWorker({ owner: 'B', run: async (job) => void runsB.push(job.id) });
    await until(() => runsB.length === 1, 'another worker takes it');
    t.same(runsB, [stuck]);
  });

  t.test('a failing job is retried with backoff, then given up after maxAttempts, giveUp called once', async (t) => {
    const { clock, jobs, watch, startWorker, runAfterMs } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    let runs = 0;
    const giveUps: Array<[Job<Payload>, string]> = [];
    const worker = startWorker({
      run: async () => {
        runs++;
        throw new Error(`boom ${runs} ${'x'.repeat(600)}`);
      },
      giveUp: async (job, reason) => void giveUps.push([job, reason]),
    });
    const retryAfter = async (attempts: number, backoffMs: number) => {
      await until(
        async () => (await jobs.get(id))?.attempts === attempts && (await jobs.get(id))?.state === 'queued',
        `attempt ${attempts} failed`,
      );
      t.equal(await runAfterMs(id), clock.nowMs() + backoffMs, `retried ${backoffMs} ms after attempt ${attempts}`);
      const status = await jobs.get(id);
      t.equal(status?.lastError?.length, 500, 'the error message is clipped');
      t.match(status, { leaseOwner: null, lastError: new RegExp(`^boom ${attempts} x`) });
      clock.advance(backoffMs - 1);
      const mark = watch.mark();
      worker.poke();
      await watch.lookedSince(mark);
      t.equal(runs, attempts, 'not retried before the backoff');
      clock.advance(1);
      worker.poke();
    };
    await retryAfter(1, 1_000);
    await retryAfter(2, 2_000);
    await until(async () => (await jobs.get(id))?.state === 'failed', 'the job is given up');
    t.equal(runs, 3);
    t.equal(giveUps.length, 1);
    t.match(giveUps[0], [{ id, attempts: 3, payload: { n: 1 } }, /^given up after 3 attempts \(at most 3\): boom 3 x/]);
    t.match(await jobs.get(id), { state: 'failed', attempts: 3, leaseOwner: null, lastError: giveUps[0]?.[1] });

    clock.advance(60_000);
    const mark = watch.mark();
    worker.poke();
    await watch.lookedSince(mark);
    t.equal(runs, 3, 'a failed job is not run again');
    t.equal(giveUps.length, 1);
  });

  t.test('a job whose workers crashed maxAttempts times is given up without running again', async (t) => {
    const { clock, jobs, logs, startWorker, hang } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const started = deferred();
      // A process that claims the job, then dies: it never renews, finishes or polls again.
      startWorker({ owner: `crashed-${attempt}`, timers: frozen(), run: () => (started.resolve(), hang()) });
      await started.promise;
      t.match(await jobs.get(id), { state: 'running', attempts: attempt, leaseOwner: `crashed-${attempt}` });
      clock.advance(LEASE_MS);
    }
    let runs = 0;
    const giveUps: Array<[Job<Payload>, string]> = [];
    startWorker({
      owner: 'survivor',
      run: async () => void runs++,
      giveUp: async (job, reason) => {
        giveUps.push([job, reason]);
        throw new Error('giveUp failed too');
      },
    });
    await until(async () => (await jobs.get(id))?.state === 'failed', 'the job is given up');
    t.equal(runs, 0, 'not run a fourth time');
    t.equal(giveUps.length, 1);
    t.match(giveUps[0]?.[1], /^given up after 3 attempts \(at most 3\): the process running the last one stopped/);
    t.match(await jobs.get(id), { state: 'failed', leaseOwner: null, lastError: giveUps[0]?.[1] });
    t.ok(
      logs.some((m) => /giving up a background job failed; it is marked failed anyway/.test(m)),
      'the failure of giveUp is logged',
    );
  });

  t.test('stop() waits for the running job, then claims nothing more', async (t) => {
    const { clock, jobs, watch, startWorker } = await setUp(t);
    const id = await jobs.enqueue('q', { n: 1 });
    const started = deferred();
    const finish = deferred();
    const worker = startWorker({ run: () => (started.resolve(), finish.promise) });
    await started.promise;
    const stopped = worker.stop({ graceMs: 10_000 });
    t.notOk(await hasSettled(stopped), 'stop waits while the job runs');
    finish.resolve();
    await stopped;
    t.match(await jobs.get(id), { state: 'done' });

    await jobs.enqueue('q', { n: 2 });
    t.same(clock.pendingTimers(), [], 'no poll is scheduled');
    // A worker starts looking synchronously when poked or when its poll timer fires: none started here.
    const mark = watch.mark();
    worker.poke();
    clock.advance(60_000);
    t.equal(watch.mark(), mark, 'a stopped worker does not look for work');
  });

  t.test(
    'stop() aborts a job still running after the grace period; it goes back to the queue at once, its attempt not counted',
    async (t) => {
      const { clock, jobs, startWorker, hang, runAfterMs } = await setUp(t);
      const id = await jobs.enqueue('q', { n: 1 });
      let signal: AbortSignal | undefined;
      const worker = startWorker({ run: (_, context) => ((signal = context.signal), hang(context.signal)) });
      await until(() => signal !== undefined, 'the job runs');
      const stopped = worker.stop({ graceMs: 1_000 });
      t.notOk(await hasSettled(stopped));
      clock.advance(999);
      t.notOk(signal?.aborted, 'not aborted before the grace period ends');
      clock.advance(1);
      t.ok(signal?.aborted, 'aborted when it ends');
      await stopped;
      t.match(await jobs.get(id), { state: 'queued', attempts: 0, leaseOwner: null, lastError: 'The job worker is stopping.' });
      t.equal(await runAfterMs(id), clock.nowMs(), 'due at once: no backoff');
    },
  );

  t.test(
    'a job its workers stopped gracefully maxAttempts times over is not given up: the next worker runs it at its first attempt',
    async (t) => {
      const { clock, jobs, startWorker, hang } = await setUp(t);
      const id = await jobs.enqueue('q', { n: 1 });
      const giveUps: string[] = [];
      for (let restart = 1; restart <= 3; restart++) {
        let signal: AbortSignal | undefined;
        const worker = startWorker({
          owner: `rolling-${restart}`,
          run: (_, context) => ((signal = context.signal), hang(context.signal)),
          giveUp: async (_, reason) => void giveUps.push(reason),
        });
        await until(() => signal !== undefined, `restart ${restart}: the job runs`);
        const stopped = worker.stop({ graceMs: 1_000 });
        t.notOk(await hasSettled(stopped), 'the stop waits for the grace period');
        clock.advance(1_000);
        await stopped;
        t.match(
          await jobs.get(id),
          { state: 'queued', attempts: 0, leaseOwner: null },
          `stop ${restart}: back in the queue, no attempt used`,
        );
      }
      const runs: Job<Payload>[] = [];
      startWorker({
        owner: 'after-the-restarts',
        run: async (job) => void runs.push(job),
        giveUp: async (_, reason) => void giveUps.push(reason),
      });
      await until(async () => (await jobs.get(id))?.state === 'done', 'the fourth worker finishes the job');
      t.match(runs, [{ id, attempts: 1 }]);
      t.same(giveUps, [], 'never given up');
    },
  );

  t.test('a job whose payload is not JSON (a hand-edited row) fails without running and does not stop the jobs behind it', async (t) => {
    const { db, jobs, logs, startWorker } = await setUp(t);
    const bad = await jobs.enqueue('q', { n: 1 });
    const good = await jobs.enqueue('q', { n: 2 });
    await db.execute('UPDATE jobs SET payload = $2 WHERE id = $1', [bad, '{not json']);
    const runs: string[] = [];
    startWorker({ run: async (job) => void runs.push(job.id) });
    // Both were enqueued at the same clock time: either may be claimed first (ids break the tie).
    await until(async () => (await jobs.get(good))?.state === 'done' && (await jobs.get(bad))?.state !== 'queued', 'both jobs are handled');
    t.same(runs, [good]);
    t.match(await jobs.get(bad), { state: 'failed', lastError: 'the payload is not JSON' });
    t.ok(logs.includes('a background job whose payload is not JSON was failed without running'));
  });

  t.test('a database failure while looking for work is logged, and polling goes on', async (t) => {
    const { clock, jobs, logs, startWorker } = await setUp(t, { failFirst: 1 });
    const id = await jobs.enqueue('q', { n: 1 });
    startWorker({ run: async () => undefined });
    await until(() => clock.pendingTimers().includes(POLL_MS), 'the next poll is scheduled');
    t.same(logs, ['looking for background jobs failed; trying again later']);
    t.match(await jobs.get(id), { state: 'queued', attempts: 0 });
    clock.advance(POLL_MS);
    await until(async () => (await jobs.get(id))?.state === 'done', 'the next poll runs the job');
    t.match(await jobs.get(id), { state: 'done', attempts: 1 });
  });
}

t.test('the job port on the embedded engine', async (t) => {
  runJobSuite(t, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'portolan-jobs-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    return `sqlite:${join(dir, 'jobs.db')}`;
  });
});

t.test('the job port on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  runJobSuite(t, (t) => withTestSchema(t, url));
});
