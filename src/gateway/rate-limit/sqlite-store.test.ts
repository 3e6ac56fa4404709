// The SQLite store shared by several connections and processes on one file.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createSqliteStore } from './sqlite-store.ts';

const HITTER = fileURLToPath(new URL('./fixtures/sqlite-hitter.ts', import.meta.url));
const NOW = Date.parse('2026-01-01T00:00:00Z');

t.test('two processes hitting one key in one file together count exactly the limit', async (t) => {
  const file = join(t.testdir(), 'counters.db');
  await createSqliteStore({ path: file }).close(); // the file and table exist before the race starts
  const children = [0, 1].map(() =>
    spawn(process.execPath, [HITTER, file, 'shared-key', '4000', '4000'], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const lines = children.map((child) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
  for (const line of lines) t.equal((await line.next()).value, 'READY', 'a process is ready');
  for (const child of children) child.stdin!.write('go\n'); // both start together
  const counted = await Promise.all(lines.map(async (line) => Number((await line.next()).value)));
  t.equal(counted[0]! + counted[1]!, 4000, `counted ${counted.join(' + ')} = exactly 4000 of 8000 hits`);
  t.ok(
    counted.every((n) => n > 0 && n < 4000),
    'both processes got some: their hits interleaved',
  );
});

t.test('two connections on one file share one counter', async (t) => {
  const file = join(t.testdir(), 'counters.db');
  const stores = [createSqliteStore({ path: file }), createSqliteStore({ path: file })];
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  const rule = { limit: 5, windowMs: 10_000 };
  const outcomes = [];
  for (let i = 0; i < 8; i++) outcomes.push(await stores[i % 2]!.hit('k', NOW, rule));
  t.same(
    outcomes.map((o) => o.counted),
    [true, true, true, true, true, false, false, false],
  );
  t.same(
    outcomes.map((o) => o.count),
    [1, 2, 3, 4, 5, 5, 5, 5],
  );
  t.same(await stores[1]!.peek('k', NOW + 9_999), { count: 5, expiresAtMs: NOW + 10_000 });
  t.equal(await stores[0]!.peek('k', NOW + 10_000), undefined, 'gone exactly at expiry');
});

t.test('expired rows are deleted now and then', async (t) => {
  const file = join(t.testdir(), 'counters.db');
  const store = createSqliteStore({ path: file, sweepEveryHits: 10 });
  t.teardown(() => store.close());
  const rule = { limit: 5, windowMs: 10_000 };
  for (let i = 0; i < 5; i++) await store.hit(`old-${i}`, NOW, rule);
  const reader = new DatabaseSync(file);
  t.teardown(() => reader.close());
  const rows = () => (reader.prepare('SELECT count(*) AS n FROM rate_limit_counter').get() as { n: number }).n;
  t.equal(rows(), 5);
  for (let i = 0; i < 4; i++) await store.hit('new', NOW + 10_000, rule);
  t.equal(rows(), 6, 'expired rows stay until a sweep');
  await store.hit('new', NOW + 10_000, rule);
  t.equal(rows(), 1, 'the tenth hit swept the five expired rows');
  for (let i = 0; i < 30; i++) await store.hit(`later-${i}`, NOW + 20_000, rule); // sweeps 'new' on the way
  t.equal(rows(), 30);
  for (let i = 0; i < 10; i++) await store.hit('last', NOW + 30_000, rule); // all 30 expired now
  t.equal(rows(), 21, 'a sweep deletes at most as many rows as hits since the last one (10 of the 30)');
});
