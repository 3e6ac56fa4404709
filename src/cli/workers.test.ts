// The supervisor of `portolan start --workers N` on fake workers and a fake clock: start, restart with a
// bounded backoff, stop all, and a start that fails. (main.test.ts starts real workers.)
import t from 'tap';
import { createFakeClock } from '../lib/clock.ts';
import { superviseWorkers, type SupervisorOptions, type WorkerHandle, type WorkerReport } from './workers.ts';

type FakeWorker = WorkerHandle & {
  number: number;
  signals: string[];
  report(report: WorkerReport): void;
  exit(code: number | null, signal?: string | null): void;
};

/** Fake workers: each fork is recorded; a test makes them report, exit, and sees the signals sent. */
function fakeCluster() {
  const forks: FakeWorker[] = [];
  let nextPid = 1000;
  const fork = (number: number): WorkerHandle => {
    const exits: ((code: number | null, signal: string | null) => void)[] = [];
    const reports: ((report: WorkerReport) => void)[] = [];
    const worker: FakeWorker = {
      number,
      pid: nextPid++,
      signals: [],
      onExit: (listener) => void exits.push(listener),
      onReport: (listener) => void reports.push(listener),
      kill: (signal) => void worker.signals.push(signal),
      report: (report) => {
        for (const listener of reports) listener(report);
      },
      exit: (code, signal = null) => {
        for (const listener of exits) listener(code, signal);
      },
    };
    forks.push(worker);
    return worker;
  };
  return { forks, fork };
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const ready = (roles = [{ role: 'gateway', url: 'http://127.0.0.1:8080' }]): WorkerReport => ({ type: 'portolan:ready', roles });

function start(count: number, extra: Partial<SupervisorOptions> = {}) {
  const clock = createFakeClock();
  const cluster = fakeCluster();
  const supervisor = superviseWorkers({ count, fork: cluster.fork, timers: clock, clock, log: silent, ...extra });
  return { clock, ...cluster, supervisor };
}

/** Whether `promise` has settled after the work under way had its turn. */
const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

t.test('forks N numbered workers and is started once every one of them is ready', async (t) => {
  const { forks, supervisor } = start(3);
  t.same(
    forks.map((w) => w.number),
    [1, 2, 3],
  );
  forks[0]!.report(ready([{ role: 'device', url: 'http://127.0.0.1:8100' }]));
  forks[2]!.report(ready());
  t.notOk(await settled(supervisor.started), 'not started while worker 2 is not ready');
  forks[1]!.report(ready());
  t.same(
    await supervisor.started,
    { ok: true, roles: [{ role: 'device', url: 'http://127.0.0.1:8100' }] },
    "worker 1's roles, for the banner",
  );
  t.same([...supervisor.pids().values()], [1000, 1001, 1002]);
});

t.test('a worker that dies is forked again after a pause that doubles while it keeps dying, up to its cap', async (t) => {
  const { clock, forks, supervisor } = start(2, { firstRestartDelayMs: 100, maxRestartDelayMs: 400, stableAfterMs: 10_000 });
  for (const w of forks) w.report(ready());
  await supervisor.started;
  const pauses: number[] = [];
  for (let death = 0; death < 5; death++) {
    const before = forks.length;
    forks.at(-1)!.exit(1);
    const diedAt = clock.nowMs();
    clock.advance(1);
    while (forks.length === before) clock.advance(1);
    pauses.push(clock.nowMs() - diedAt);
    t.equal(forks.at(-1)!.number, 2, 'the same worker number is forked again');
    forks.at(-1)!.report(ready());
  }
  t.same(pauses, [100, 200, 400, 400, 400], 'a crash loop waits longer each time, never more than the cap');
  t.equal(forks[0]!.signals.length, 0, 'the other worker is left alone');
  // A worker that ran past stableAfterMs was not in a crash loop: its pauses start over.
  clock.advance(10_000);
  const before = forks.length;
  forks.at(-1)!.exit(null, 'SIGKILL');
  clock.advance(99);
  t.equal(forks.length, before, 'not yet');
  clock.advance(1);
  t.equal(forks.length, before + 1, 'forked again after the first pause');
});

t.test('stop sends SIGTERM to every worker, waits for their drain, and forks none again', async (t) => {
  const { clock, forks, supervisor } = start(3, { stopTimeoutMs: 5000 });
  for (const w of forks) w.report(ready());
  await supervisor.started;
  forks[1]!.exit(1); // dies just before the stop: its restart is pending
  const stopping = supervisor.stop();
  t.same(
    forks.slice(0, 3).map((w) => w.signals),
    [['SIGTERM'], [], ['SIGTERM']],
    'each running worker is asked to drain',
  );
  clock.advance(4999);
  forks[0]!.exit(0);
  t.notOk(await settled(stopping), 'waits for the last worker');
  forks[2]!.exit(0);
  t.equal(await stopping, true, 'every worker drained');
  clock.advance(60_000);
  t.equal(forks.length, 3, 'the pending restart was cancelled; no worker is forked after a stop');
  t.equal(supervisor.stop(), stopping, 'a second signal joins the stop under way');
});

t.test('a worker that does not drain in time is killed', async (t) => {
  const { clock, forks, supervisor } = start(2, { stopTimeoutMs: 5000 });
  for (const w of forks) w.report(ready());
  await supervisor.started;
  const stopping = supervisor.stop();
  forks[0]!.exit(0);
  clock.advance(4999);
  t.same(forks[1]!.signals, ['SIGTERM']);
  clock.advance(1);
  t.same(forks[1]!.signals, ['SIGTERM', 'SIGKILL'], 'killed at the deadline');
  forks[1]!.exit(null, 'SIGKILL');
  t.equal(await stopping, false, 'not every worker drained');
});

t.test('a worker that cannot start ends the start with its one line; the others are stopped, none forked again', async (t) => {
  const { clock, forks, supervisor } = start(3);
  forks[0]!.report(ready());
  forks[1]!.report({ type: 'portolan:failed', line: 'Cannot open the database (PORTOLAN_DATABASE=...): ...' });
  forks[2]!.report({ type: 'portolan:failed', line: 'the same failure, from another worker' });
  t.same(await supervisor.started, { ok: false, line: 'Cannot open the database (PORTOLAN_DATABASE=...): ...' }, 'the first line only');
  t.same(
    forks.map((w) => w.signals),
    [['SIGTERM'], ['SIGTERM'], ['SIGTERM']],
  );
  for (const w of forks) w.exit(2);
  clock.advance(600_000);
  t.equal(forks.length, 3, 'nothing is forked again');
});

t.test('a worker that exits before it is ready fails the start too', async (t) => {
  const { forks, supervisor } = start(2);
  forks[1]!.exit(null, 'SIGSEGV');
  const outcome = await supervisor.started;
  t.equal(outcome.ok, false);
  t.match(!outcome.ok && outcome.line, /^Worker 2 stopped while starting \(SIGSEGV\)/);
});

t.test('a restarted worker that cannot start is forked again later: the start is long over', async (t) => {
  const { clock, forks, supervisor } = start(1, { firstRestartDelayMs: 100 });
  forks[0]!.report(ready());
  await supervisor.started;
  forks[0]!.exit(1);
  clock.advance(100);
  forks[1]!.report({ type: 'portolan:failed', line: 'the database is down' });
  forks[1]!.exit(2);
  clock.advance(200);
  t.equal(forks.length, 3, 'tried again, after a longer pause');
});
