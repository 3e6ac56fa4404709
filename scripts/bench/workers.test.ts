// The workers rows' table and options (scripts/bench/workers.ts): the ratio is of the medians, each round's
// own ratio is beside it, and the goal is a ratio above 1.
import t from 'tap';
import type { LoadResult } from './load.ts';
import { onlyWorkers, type WorkersCell, workersTable } from './workers.ts';

const result = (rps: number): LoadResult => ({ rps, p99Ms: 10, requests: rps * 5, non2xx: 0, errors: 0, cpuUsPerRequest: 50 });
const cell = (...rps: number[]): WorkersCell => ({ results: rps.map(result), primaryUs: rps.map(() => 2), unexpected: 0 });
const kase = { name: 'get', label: 'GET list' };

t.test('the ratio row is workers 2 over workers 1 of the medians, with each round paired', async (t) => {
  const { table, goals } = workersTable(
    [kase],
    new Map([
      ['1 get', cell(1000, 4000, 2000)],
      ['2 get', cell(3000, 3000, 2500)],
    ]),
  );
  t.match(table.at(-1), /^\| 2 \/ 1 \| \*\*1\.50x\*\* \(rounds 3\.00, 0\.75, 1\.25\) \|$/);
  t.match(table[2], /^\| 1 \| 2000 req\/s · 50 µs · p99 10\.0 ms \|$/, 'one process: no primary share');
  t.match(table[3], /^\| 2 \| 3000 req\/s · 50 µs \(primary 2\.0\) ·/);
  t.match(goals[0], /1\.50x req\/s \(goal above 1\): met$/);
});

t.test('a ratio of 1 or less is not met', async (t) => {
  const { goals } = workersTable(
    [kase],
    new Map([
      ['1 get', cell(2000)],
      ['2 get', cell(2000)],
    ]),
  );
  t.match(goals[0], /1\.00x req\/s \(goal above 1\): \*\*not met\*\*$/);
});

t.test('--only takes workers alone, and not with --no-workers', async (t) => {
  t.equal(onlyWorkers({ workers: true }), false);
  t.equal(onlyWorkers({ workers: true, only: 'workers' }), true);
  t.throws(() => onlyWorkers({ workers: true, only: 'gateway' }), /the one choice is workers/);
  t.throws(() => onlyWorkers({ workers: false, only: 'workers' }), /leave nothing to run/);
});
