// Hostile snapshots against their processing (interface C, issue #20): decompression bombs of every shape
// (zeros after the tar's end, oversized extended headers and sparse entries, a stream past the byte budget),
// a snapshot whose rules never finish, deletes while it is processed, threads and processes that crash.
// Every wait is for an event (a thread's message or exit, a record's or a job's state); time moves only on
// the fake clock, and only where a budget or a check is the subject.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { createFakeClock } from '../lib/clock.ts';
import type { Timers } from '../lib/timers.ts';
import { DEFAULT_RULES_PATH, extractSnapshot, inflatedBudgetLimits } from '../interfaces/snapshots/engine/index.ts';
import { gzippedZeros, packFolder, rawTar, TEST_MANIFEST, type RawEntry } from '../interfaces/snapshots/engine/test-archive.ts';
import { DELETION_CHECK_MS } from '../interfaces/snapshots/processing.ts';
import { createWorkerRunner, type ProcessingRunner } from '../interfaces/snapshots/processing-runner.ts';
import type { WorkerMessage } from '../interfaces/snapshots/processing-worker.ts';
import { SAMPLE_DIR } from '../interfaces/snapshots/sample.ts';
import {
  healthyArchive,
  jobsSettled,
  processed,
  testService,
  testStore,
  tree,
  until,
  uploaded,
  type TestStore,
} from '../interfaces/snapshots/test-snapshots-helpers.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const manifestEntry: RawEntry = { path: 'manifest.json', body: JSON.stringify(TEST_MANIFEST) };

/** The sample snapshot packed as a producer packs one (`tar czf`), its bytes. */
async function sampleArchive(store: TestStore): Promise<Buffer> {
  const file = join(store.root, 'sample.tgz');
  await packFolder(SAMPLE_DIR, file);
  return readFile(file);
}

type Deferred<T> = { promise: Promise<T>; resolve: (value: T) => void };
const deferred = <T>(): Deferred<T> => {
  let resolve!: (value: T) => void;
  return { promise: new Promise<T>((r) => (resolve = r)), resolve };
};

/** A processing thread as a test sees it: when it reached the rules, whether and when it ended. */
type Thread = { worker: Worker; evaluating: Promise<void>; exited: Promise<number>; hasExited: () => boolean };

/** The real worker runner, whose threads the test can watch: thread(n) is the n-th started (from 0). */
function watchedRunner(timers: Timers, options: { timeBudgetMs?: number; heapMb?: number; onWorker?: (worker: Worker) => void } = {}) {
  const slots: Deferred<Thread>[] = [];
  const slot = (n: number) => (slots[n] ??= deferred<Thread>());
  let started = 0;
  const runner = createWorkerRunner({
    timers,
    timeBudgetMs: options.timeBudgetMs ?? 60_000,
    ...(options.heapMb ? { heapMb: options.heapMb } : {}),
    onWorker: (worker) => {
      let ended = false;
      const evaluating = new Promise<void>((resolve) =>
        worker.on('message', (m: WorkerMessage) => m.type === 'phase' && m.phase === 'evaluating' && resolve()),
      );
      const exited = new Promise<number>((resolve) => worker.once('exit', (code) => ((ended = true), resolve(code))));
      slot(started++).resolve({ worker, evaluating, exited, hasExited: () => ended });
      options.onWorker?.(worker);
    },
  });
  return { runner, thread: (n: number) => slot(n).promise };
}

/**
 * The shipped rules plus one whose regex backtracks polynomially (`a*a*a*b`: allowed, README "Bounds on what
 * rules can cost") and a snapshot line that makes it run for hours: rules that never finish, on demand.
 */
async function neverEndingRules(store: TestStore): Promise<string> {
  const rules = JSON.parse(await readFile(DEFAULT_RULES_PATH, 'utf8')) as { rules: unknown[] };
  rules.rules.push({
    name: 'polynomial-backtracking',
    importance: 'low',
    header: 'A rule whose regular expression backtracks polynomially',
    summary: 'Each line of 4000 a characters costs it about 10^13 steps.',
    action: 'None: a test of the time budget.',
    solutions: ['https://support.example.com/kb/portolan-test'],
    match: { pattern: { files: 'logs/spin.log', regex: 'a*a*a*b' } },
  });
  const path = join(store.root, 'rules.json');
  await writeFile(path, JSON.stringify(rules));
  return path;
}
const NEVER_ENDING_LOG = { 'logs/spin.log': `${'a'.repeat(4000)}\n` };

/** Waits until the snapshot's job is queued again (its attempt recorded), so the clock moves from the time it was recorded. */
const jobQueuedAgain = (store: TestStore, attempts: number) =>
  until(
    async () =>
      (await store.db.query("SELECT id FROM jobs WHERE state = 'queued' AND attempts = $1", [attempts])).length === 1 || undefined,
    `the job is queued after attempt ${attempts}`,
  );

t.test('C-zeros-after-tar-end: a gzip stream of zeros after the tar end is never decompressed; the snapshot is processed', async (t) => {
  const store = await testStore(t);
  const sample = await sampleArchive(store);
  const archive = Buffer.concat([sample, gzippedZeros(256 * MiB)]);
  t.ok(archive.length < 2 * MiB, `${archive.length} bytes that inflate to more than 256 MiB`);

  const path = join(store.root, 'bomb.tgz');
  await writeFile(path, archive);
  const extracted = await extractSnapshot(path, join(store.root, 'unpacked'));
  t.ok(extracted.ok, extracted.ok ? 'extracted' : extracted.message);
  const tarBytes = gunzipSync(sample).length;
  if (extracted.ok)
    t.ok(
      extracted.inflatedBytes <= tarBytes + 64 * 1024,
      `decompressed ${extracted.inflatedBytes} bytes: the tar (${tarBytes}) and at most one chunk past its end`,
    );

  const service = await testService(store);
  const id = await uploaded(service, 'alice', archive);
  const record = await processed(service, 'alice', id);
  t.equal(record.status, 'COMPLETE', 'the archive is the tar: what follows its end is ignored, as GNU tar does');
  t.same(
    (await service.diagnostics('alice', id))?.diagnostics.diagnostic,
    (await service.diagnostics('alice', '0'))?.diagnostics.diagnostic,
    "the sample's diagnostics",
  );
});

t.test(
  'C-oversized-extended-header: extended headers, long names and sparse entries that declare 8 GiB end ERROR at their header',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store);
    const cases: Array<{ entry: RawEntry; message: RegExp }> = [
      {
        entry: { path: 'PaxHeader', type: 'ExtendedHeader' },
        message: /extended header \(ExtendedHeader\) of 8589934592 bytes \(at most 1 MiB\)/,
      },
      {
        entry: { path: 'PaxGlobal', type: 'GlobalExtendedHeader' },
        message: /extended header \(GlobalExtendedHeader\) of 8589934592 bytes/,
      },
      {
        entry: { path: '././@LongLink', type: 'NextFileHasLongPath' },
        message: /extended header \(NextFileHasLongPath\) of 8589934592 bytes/,
      },
      { entry: { path: 'logs/sparse.log', type: 'SparseFile' }, message: /"logs\/sparse.log" has an unsupported type \(SparseFile\)/ },
    ];
    for (const { entry, message } of cases) {
      // The header's body never comes: 256 MiB of zeros follow, which tar would skip as that body.
      const archive = Buffer.concat([
        gzipSync(rawTar([manifestEntry, { ...entry, body: 'x', size: 8 * GiB }], { end: false })),
        gzippedZeros(256 * MiB),
      ]);
      const record = await processed(service, 'alice', await uploaded(service, 'alice', archive));
      t.equal(record.status, 'ERROR', String(entry.type));
      t.match(record.messages[0], message);
    }
    await jobsSettled(store);
    t.same(await tree(store.dataDir), [], 'nothing of them is kept');
  },
);

t.test(
  'C-inflated-budget: a snapshot that decompresses past PORTOLAN_SNAPSHOT_MAX_INFLATED_BYTES ends ERROR with the reason',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store, { extractLimits: inflatedBudgetLimits(8 * MiB) });
    const paxComment = (n: number) => `${n} comment=${'c'.repeat(n - `${n} comment=`.length - 1)}\n`;
    const cases = [
      // A file whose header declares more than the budget: refused before a byte of it is written.
      {
        archive: gzipSync(rawTar([manifestEntry, { path: 'logs/zeros.log', body: Buffer.alloc(9 * MiB) }])),
        message: /the archive unpacks to more than 8388608 bytes/,
      },
      // Extended headers under tar's own 1 MiB each, which no entry count sees: the stream's bound stops them.
      {
        archive: gzipSync(
          rawTar([
            manifestEntry,
            ...Array.from({ length: 12 }, (): RawEntry => ({ path: 'PaxHeader', type: 'ExtendedHeader', body: paxComment(900 * 1024) })),
          ]),
        ),
        message: /the archive inflates to more than 8388608 bytes/,
      },
    ];
    for (const { archive, message } of cases) {
      const record = await processed(service, 'alice', await uploaded(service, 'alice', archive));
      t.equal(record.status, 'ERROR');
      t.match(record.messages[0], message);
    }
    const healthy = await processed(service, 'alice', await uploaded(service, 'alice', healthyArchive()));
    t.equal(healthy.status, 'COMPLETE', 'a snapshot within the budget is processed');
  },
);

t.test(
  'C-processing-time-budget: rules that never finish are stopped at the time budget; the snapshot ends ERROR with the reason',
  async (t) => {
    const store = await testStore(t);
    const threads = watchedRunner(store.clock, { timeBudgetMs: 60_000 });
    const service = await testService(store, { rulesPath: await neverEndingRules(store), processingRunner: threads.runner });
    const id = await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG));
    const thread = await threads.thread(0);
    await thread.evaluating;
    t.equal((await service.get('alice', id))?.status, 'PROCESSING', 'the rules are running');
    store.clock.advance(60_000);
    t.equal(await thread.exited, 1, 'the thread is ended at the budget');
    const record = await processed(service, 'alice', id);
    t.match(record, { status: 'ERROR', messages: ['processing took longer than the time budget of 60 s per snapshot'] });
    await jobsSettled(store);
    t.same(await tree(store.dataDir), [], 'its folder is removed');
  },
);

t.test(
  'C-delete-stops-processing: DELETE of one snapshot and delete-all end their threads before they answer, and leave nothing on disk',
  async (t) => {
    const store = await testStore(t);
    const threads = watchedRunner(store.clock);
    const service = await testService(store, { rulesPath: await neverEndingRules(store), processingRunner: threads.runner });
    const first = await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG));
    const second = await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG));
    const third = await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG)); // waits: two run at once
    const [a, b] = await Promise.all([threads.thread(0), threads.thread(1)]);
    await Promise.all([a.evaluating, b.evaluating]);

    // The clock never moves in this test: only the delete can end a thread.
    const removed = await service.remove('alice', first);
    t.equal(removed, 'deleted');
    t.ok(a.hasExited(), 'the first thread had ended when DELETE answered');
    t.notOk(b.hasExited(), 'the other snapshot goes on');

    const c = await threads.thread(2); // the freed slot takes the third snapshot
    await c.evaluating;
    t.same((await service.removeAll('alice')).sort(), [second, third].sort());
    t.ok(b.hasExited() && c.hasExited(), 'delete-all had ended every thread when it answered');
    await jobsSettled(store);
    t.same(await tree(store.dataDir), [], 'nothing is left on disk');
    t.same(await service.list('alice'), ['0']);
  },
);

t.test('C-delete-in-another-process: a delete answered by another process stops the processing within the deletion check', async (t) => {
  const store = await testStore(t);
  const threads = watchedRunner(store.clock);
  await testService(store, { rulesPath: await neverEndingRules(store), processingRunner: threads.runner });
  const answering = await testService(store, { concurrency: 0 }); // takes requests, processes nothing
  const id = await uploaded(answering, 'alice', healthyArchive(NEVER_ENDING_LOG));
  store.clock.advance(1000); // no poke crosses processes: the processing one finds the job when it polls
  const thread = await threads.thread(0);
  await thread.evaluating;
  t.equal(await answering.remove('alice', id), 'deleted');
  t.notOk(thread.hasExited(), 'the other process has not looked yet');
  store.clock.advance(DELETION_CHECK_MS);
  t.equal(await thread.exited, 1, `the thread is ended once the processing process checks (every ${DELETION_CHECK_MS} ms)`);
  await jobsSettled(store);
  t.same(await tree(store.dataDir), [], 'nothing is left on disk');
});

t.test(
  'C-event-loop-free-while-processing: while two snapshots spin in their rules, the event loop turns and every request is answered',
  async (t) => {
    const store = await testStore(t);
    const threads = watchedRunner(store.clock);
    const service = await testService(store, { rulesPath: await neverEndingRules(store), processingRunner: threads.runner });
    const ids = [
      await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG)),
      await uploaded(service, 'alice', healthyArchive(NEVER_ENDING_LOG)),
    ];
    const spinning = await Promise.all([threads.thread(0), threads.thread(1)]);
    await Promise.all(spinning.map((thread) => thread.evaluating));

    let turns = 0;
    while (turns < 1000) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => service.get('alice', ids[i % 2]!)));
    const uploadedMeanwhile = await uploaded(service, 'bob', healthyArchive());
    t.equal(turns, 1000, 'the event loop turned 1000 times');
    t.ok(
      answers.every((record) => record?.status === 'PROCESSING'),
      '100 requests answered, each while both snapshots were still processing',
    );
    t.ok(uploadedMeanwhile, 'an upload is taken meanwhile');
    t.ok(
      spinning.every((thread) => !thread.hasExited()),
      'and both threads were still at work throughout',
    );
    await service.removeAll('alice');
  },
);

t.test(
  'C-thread-crash-given-up: a job whose processing thread dies every time ends ERROR after PORTOLAN_SNAPSHOT_MAX_ATTEMPTS',
  async (t) => {
    const store = await testStore(t);
    // Each thread dies as soon as it starts, as one killed by the runtime would.
    const threads = watchedRunner(store.clock, { onWorker: (worker) => void worker.terminate() });
    const service = await testService(store, { processingRunner: threads.runner, maxAttempts: 3 });
    const id = await uploaded(service, 'alice', healthyArchive());
    for (const [attempt, backoffMs] of [
      [1, 1000],
      [2, 2000],
    ] as const) {
      await (await threads.thread(attempt - 1)).exited;
      await jobQueuedAgain(store, attempt);
      t.equal((await service.get('alice', id))?.status, 'PROCESSING', `attempt ${attempt} failed; tried again`);
      store.clock.advance(backoffMs);
    }
    await (await threads.thread(2)).exited;
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'ERROR');
    t.match(record.messages, [
      /^The snapshot could not be processed: given up after 3 attempts \(at most 3\): the processing thread stopped without an answer \(exit code \d+\)$/,
    ]);
    await jobsSettled(store);
    t.same(await tree(store.dataDir), []);
  },
);

const HEAP_MB = 24;

t.test(
  "C-thread-memory-bound: a snapshot whose processing needs more than the thread's heap ends ERROR; the process answers on",
  async (t) => {
    const store = await testStore(t);
    const threads = watchedRunner(store.clock, { heapMb: HEAP_MB });
    const service = await testService(store, { processingRunner: threads.runner });
    // A declaration of 4 MiB (what the rules read of one file) that parses to over a million objects.
    const declarations = `[${Array.from({ length: 1_000_000 }, () => '{}').join(',')}]`;
    const id = await uploaded(service, 'alice', healthyArchive({ 'config/declarations.json': declarations }));
    const record = await processed(service, 'alice', id);
    t.match(record, { status: 'ERROR', messages: [`processing needed more than ${HEAP_MB} MiB of memory`] });
    t.equal(await (await threads.thread(0)).exited, 1, 'its thread ended');
    t.same(await service.list('alice'), ['0', id], 'this process answers on');
    await jobsSettled(store);
    t.same(await tree(store.dataDir), [], 'its folder is removed');
  },
);

t.test(
  'C-process-crash-given-up: a job whose process dies (its lease lapses) on every attempt ends ERROR, never resumed forever',
  async (t) => {
    const store = await testStore(t);
    // A process that dies while processing: its timers never fire again (no lease renewal) and its work never ends.
    const dead: Array<() => void> = [];
    const dying: ProcessingRunner = (_task, signal) =>
      new Promise((_, reject) => {
        dead.push(() => reject(new Error('the process is gone')));
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    t.teardown(() => {
      for (const end of dead) end();
    });
    let id = '';
    for (let attempt = 1; attempt <= 3; attempt++) {
      const process = await testService(store, { timers: createFakeClock(), processingRunner: dying, maxAttempts: 3 });
      if (attempt === 1) id = await uploaded(process, 'alice', healthyArchive());
      await until(async () => dead.length === attempt || undefined, `attempt ${attempt} has started`);
      store.clock.advance(30_000); // its lease (30 s) lapses: the next start takes the job up
    }
    const restarted = await testService(store, { maxAttempts: 3 });
    const record = await processed(restarted, 'alice', id);
    t.equal(record.status, 'ERROR');
    t.match(
      record.messages[0],
      /^The snapshot could not be processed: given up after 3 attempts \(at most 3\): the process running the last one stopped before it finished/,
    );
  },
);

t.test(
  'C-graceful-restarts-not-attempts: three graceful stops while a snapshot is processed use none of its attempts; the fourth process completes it',
  async (t) => {
    const store = await testStore(t);
    // Processing that goes on until its job is stopped: each process is stopped (a rolling restart) while it is under way.
    let started = 0;
    const untilStopped: ProcessingRunner = (_task, signal) => {
      started++;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    };
    let id = '';
    for (let restart = 1; restart <= 3; restart++) {
      const timers = createFakeClock(); // this process's own timers: its stop's grace period ends when the test says
      const instance = await testService(store, { timers, processingRunner: untilStopped });
      if (restart === 1) id = await uploaded(instance, 'alice', healthyArchive());
      await until(async () => started === restart || undefined, `process ${restart} is processing the snapshot`);
      const stopped = instance.stop();
      await until(async () => timers.pendingTimers().includes(0) || undefined, `process ${restart} is stopping its job`);
      timers.advance(0);
      await stopped;
      const [job] = await store.db.query<{ state: string; attempts: number }>('SELECT state, attempts FROM jobs');
      t.match(job, { state: 'queued', attempts: 0 }, `stop ${restart}: the job waits again, no attempt used`);
      t.equal((await instance.get('alice', id))?.status, 'PROCESSING', `stop ${restart}: the snapshot is still PROCESSING`);
    }
    const fourth = await testService(store); // the default maxAttempts: 3
    const record = await processed(fourth, 'alice', id);
    t.equal(record.status, 'COMPLETE', 'the fourth process completes it');
    t.same(record.messages, []);
  },
);
