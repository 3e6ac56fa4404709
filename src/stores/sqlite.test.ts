import { mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { TapTest } from '../lib/tap-test.ts';
import { runDatabaseContract } from './database-contract.ts';
import { isDatabaseError } from './database-error.ts';
import { applyMigrations } from './migrations.ts';
import { openSqliteDatabase, SQLITE_MEMORY } from './sqlite.ts';

/** `<tmp>/data/portolan.db`, under a directory removed when the test ends. */
function tempDatabasePath(t: TapTest): { root: string; dataDir: string; path: string } {
  const root = mkdtempSync(join(tmpdir(), 'portolan-sqlite-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const dataDir = join(root, 'data');
  return { root, dataDir, path: join(dataDir, 'portolan.db') };
}

t.test('the SQLite engine keeps the database contract', async (t) => {
  runDatabaseContract(t, {
    fresh: async (t) => {
      const { path } = tempDatabasePath(t);
      return { url: `sqlite:${path}`, open: async () => openSqliteDatabase({ path }) };
    },
  });
});

t.test('the file is created with its directory, in WAL mode, with foreign keys on and a busy timeout', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path, busyTimeoutMs: 1234 });
  t.teardown(() => db.close());
  t.same(await db.query('PRAGMA journal_mode'), [{ journal_mode: 'wal' }]);
  t.same(await db.query('PRAGMA foreign_keys'), [{ foreign_keys: 1 }]);
  t.same(await db.query('PRAGMA busy_timeout'), [{ timeout: 1234 }]);
});

t.test('an in-memory database works for tests, and is reported lost (not silently emptied) if its connection drops', async (t) => {
  const db = openSqliteDatabase({ path: SQLITE_MEMORY });
  t.teardown(() => db.close());
  t.same(await db.query('SELECT $1 AS answer', [42]), [{ answer: 42 }]);
  db.dropConnectionForTest();
  const error = await db.query('SELECT 1 AS one').catch((e: unknown) => e);
  t.ok(isDatabaseError(error, 'unavailable'));
  t.match((error as Error).message, /in-memory SQLite database was lost/);
});

t.test('a dropped connection is opened again on the next call, data intact', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript("CREATE TABLE notes (id TEXT PRIMARY KEY); INSERT INTO notes VALUES ('a');");
  db.dropConnectionForTest();
  t.same(await db.query('SELECT id FROM notes'), [{ id: 'a' }]);
  t.same(await db.query('PRAGMA foreign_keys'), [{ foreign_keys: 1 }], 'the new connection is set up like the first');
});

t.test('with the data directory gone, calls fail clearly and ping says why in time; once it is back, all works again', async (t) => {
  const { root, dataDir, path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await applyMigrations(db, [
    { version: 1, name: 'notes', up: "CREATE TABLE notes (id TEXT PRIMARY KEY); INSERT INTO notes VALUES ('a');" },
  ]);
  t.same(await db.ping(500), { ok: true });

  db.dropConnectionForTest();
  renameSync(dataDir, join(root, 'data-away'));
  // It answers at all (a hung ping would hold this test until tap's timeout) and says why.
  const ping = await db.ping(500);
  t.equal(ping.ok, false);
  t.match(ping, { reason: /Cannot open the SQLite database file .*portolan\.db/ });
  const error = await db.query('SELECT id FROM notes').catch((e: unknown) => e);
  t.ok(isDatabaseError(error, 'unavailable'), 'a query fails as unavailable');
  t.match((error as Error).message, /Cannot open the SQLite database file/);
  t.same(await db.ping(500), ping, 'still down, still answering');

  renameSync(join(root, 'data-away'), dataDir);
  t.same(await db.ping(500), { ok: true }, 'ping is ok again without a restart');
  t.same(await db.query('SELECT id FROM notes'), [{ id: 'a' }], 'the data is intact');
});

t.test('a file moved away under an open connection is noticed by ping, and picked up again when back', async (t) => {
  const { root, dataDir, path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript("CREATE TABLE notes (id TEXT PRIMARY KEY); INSERT INTO notes VALUES ('a');");
  renameSync(dataDir, join(root, 'data-away'));
  t.match(await db.ping(500), { ok: false, reason: /Cannot open/ }, 'the open connection no longer counts: its file is not at the path');
  renameSync(join(root, 'data-away'), dataDir);
  t.same(await db.ping(500), { ok: true });
  t.same(await db.query('SELECT id FROM notes'), [{ id: 'a' }]);
});

t.test('a connection lost in the middle of a transaction fails that transaction, not the next one', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript('CREATE TABLE notes (id TEXT PRIMARY KEY)');
  const error = await db
    .transaction(async (tx) => {
      await tx.execute("INSERT INTO notes VALUES ('lost')");
      db.dropConnectionForTest();
      await tx.execute("INSERT INTO notes VALUES ('never')");
    })
    .catch((e: unknown) => e);
  t.ok(isDatabaseError(error, 'unavailable'));
  t.match((error as Error).message, /lost during the transaction/);
  await db.transaction((tx) => tx.execute("INSERT INTO notes VALUES ('next')"));
  t.same(await db.query('SELECT id FROM notes'), [{ id: 'next' }], 'the lost transaction left nothing behind');
});

/** Frames in the write-ahead log: each commit appends the pages it changed, one frame each. */
function walFrames(path: string, pageSize: number): number {
  const size = statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  return size === 0 ? 0 : (size - 32) / (pageSize + 24);
}

/** The grouped writes of the mapping role's inserts (`execute(..., { grouped: true })`); every other write runs at once. */
const GROUPED = { grouped: true };

t.test('the writes of one event-loop turn are committed together, each settled once committed', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript('CREATE TABLE notes (id TEXT PRIMARY KEY)');
  const [{ page_size: pageSize }] = (await db.query('PRAGMA page_size')) as [{ page_size: number }];
  const before = walFrames(path, pageSize);
  // Another connection, as another process would see the file.
  const observer = new DatabaseSync(path, { readOnly: true });
  t.teardown(() => observer.close());
  const seen = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      db.execute('INSERT INTO notes (id) VALUES ($1)', [`n${i}`], GROUPED).then(({ rowCount }) => {
        const row = observer.prepare('SELECT id FROM notes WHERE id = ?').get(`n${i}`);
        return { rowCount, committed: row !== undefined };
      }),
    ),
  );
  t.ok(
    seen.every((s) => s.rowCount === 1 && s.committed),
    'each insert counts its row, and another connection sees it committed when it resolves',
  );
  // One by one, 50 commits would append at least 50 frames; together, the few pages the group changed.
  const frames = walFrames(path, pageSize) - before;
  t.ok(frames > 0 && frames < 10, `one commit for the 50 inserts (${frames} WAL frames)`);
});

t.test('in a group, a statement that fails fails alone; one that ends the transaction does not undo the others', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript("CREATE TABLE notes (id TEXT PRIMARY KEY); INSERT INTO notes VALUES ('a');");
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (isDatabaseError(e) ? e.kind : String(e)),
    );
  // A unique violation aborts its own statement only (SQLite's default): the group's transaction stands.
  t.same(
    await Promise.all([
      outcome(db.execute("INSERT INTO notes VALUES ('b')", [], GROUPED)),
      outcome(db.execute("INSERT INTO notes VALUES ('a')", [], GROUPED)),
      outcome(db.execute("INSERT INTO notes VALUES ('c')", [], GROUPED)),
    ]),
    ['ok', 'unique-violation', 'ok'],
  );
  // OR ROLLBACK ends the whole transaction: the group runs again statement by statement, as ungrouped.
  t.same(
    await Promise.all([
      outcome(db.execute("INSERT INTO notes VALUES ('d')", [], GROUPED)),
      outcome(db.execute("INSERT OR ROLLBACK INTO notes VALUES ('a')", [], GROUPED)),
      outcome(db.execute("INSERT INTO notes VALUES ('e')", [], GROUPED)),
    ]),
    ['ok', 'unique-violation', 'ok'],
  );
  t.same(
    (await db.query('SELECT id FROM notes ORDER BY id')).map((r) => r.id),
    ['a', 'b', 'c', 'd', 'e'],
  );
});

t.test('grouped writes keep their order with reads and transactions called in the same turn', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  t.teardown(() => db.close());
  await db.executeScript('CREATE TABLE notes (id TEXT PRIMARY KEY)');
  const count = async (run: Pick<typeof db, 'query'>) => (await run.query('SELECT count(*) AS n FROM notes'))[0]!.n;
  const [, afterOne, inTransaction, , afterThree] = await Promise.all([
    db.execute("INSERT INTO notes VALUES ('1')", [], GROUPED),
    count(db),
    db.transaction(async (tx) => {
      const n = await count(tx);
      await tx.execute("INSERT INTO notes VALUES ('2')");
      return n;
    }),
    db.execute("INSERT INTO notes VALUES ('3')", [], GROUPED),
    count(db),
  ]);
  t.same([afterOne, inTransaction, afterThree], [1, 1, 3]);
});

t.test('a write waiting for its group when the database closes is committed first', async (t) => {
  const { path } = tempDatabasePath(t);
  const db = openSqliteDatabase({ path });
  await db.executeScript('CREATE TABLE notes (id TEXT PRIMARY KEY)');
  const write = db.execute("INSERT INTO notes VALUES ('last')", [], GROUPED);
  await db.close();
  t.same(await write, { rowCount: 1 });
  const again = openSqliteDatabase({ path });
  t.teardown(() => again.close());
  t.same(await again.query('SELECT id FROM notes'), [{ id: 'last' }]);
  const refused = await db.execute("INSERT INTO notes VALUES ('late')").catch((e: unknown) => e);
  t.ok(isDatabaseError(refused, 'closed'), 'after close, a write is refused');
});
