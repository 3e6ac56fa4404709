import { mkdtempSync, renameSync, rmSync } from 'node:fs';
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
