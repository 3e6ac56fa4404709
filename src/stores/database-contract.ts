// The behaviour every Database implementation owes its stores, written once and run against each engine
// (sqlite.test.ts, postgres.test.ts). Each subtest gets a fresh, empty database of its own.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TapTest } from '../lib/tap-test.ts';
import { toBoolean, type Database, type Migration } from './database.ts';
import { isDatabaseError } from './database-error.ts';
import { STARTUP_MIGRATIONS } from './fixtures/startup-migrations.ts';
import { applyMigrations, SchemaVersionError } from './migrations.ts';

export type FreshDatabase = {
  /** The setting that names it, for `openDatabase` and for other processes. */
  url: string;
  /** Opens it (again): every call reaches the same data. */
  open(): Promise<Database>;
};

export type ContractSubject = {
  /** A fresh, empty database, removed when `t` ends. Undefined when the engine is not available (the caller has skipped). */
  fresh(t: TapTest): Promise<FreshDatabase | undefined>;
};

const NOTES: Migration = { version: 1, name: 'notes', up: 'CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)' };
const NOTE_AUTHORS: Migration = { version: 2, name: 'note authors', up: 'ALTER TABLE notes ADD COLUMN author TEXT' };
const NOTE_TAGS: Migration = {
  version: 3,
  name: 'note tags',
  up: {
    sqlite:
      'CREATE TABLE note_tags (note_id TEXT NOT NULL REFERENCES notes (id), tag TEXT NOT NULL); CREATE INDEX note_tags_tag ON note_tags (tag);',
    postgres:
      'CREATE TABLE note_tags (note_id TEXT NOT NULL REFERENCES notes (id), tag TEXT NOT NULL); CREATE INDEX note_tags_tag ON note_tags USING btree (tag);',
  },
};

const MIGRATING_PROCESS = fileURLToPath(new URL('./fixtures/migrate-in-process.ts', import.meta.url));

/** Runs the fixture as a separate process; resolves with its exit code and what it wrote to stderr. */
const migrateInAnotherProcess = (url: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    // Without the test runner's NODE_OPTIONS hooks: the child is a plain process starting up, and starts faster.
    const { NODE_OPTIONS: _runnerHooks, ...env } = process.env;
    const child = spawn(process.execPath, [MIGRATING_PROCESS, url], { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });

const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Registers the contract's subtests on `t`. */
export function runDatabaseContract(t: TapTest, subject: ContractSubject): void {
  /** A fresh database, open, with the notes schema; closed when the subtest ends. */
  const withNotes = async (t: TapTest, migrations: Migration[] = [NOTES]): Promise<Database | undefined> => {
    const fresh = await subject.fresh(t);
    if (!fresh) return undefined;
    const db = await fresh.open();
    t.teardown(() => db.close());
    await applyMigrations(db, migrations);
    return db;
  };

  t.test('every SqlValue binds and reads back: text, integer, real, bigint, both booleans and null', async (t) => {
    const db = await withNotes(t, []);
    if (!db) return;
    await db.executeScript('CREATE TABLE samples (s TEXT, i INTEGER, f DOUBLE PRECISION, b BIGINT, flag BOOLEAN, absent TEXT)');
    const big = 9_007_199_254_740_993n; // 2^53 + 1: not representable as a number
    const text = 'it\'s $1 and ? and "quoted" and ünïcødé';
    t.same(await db.execute('INSERT INTO samples VALUES ($1, $2, $3, $4, $5, $6)', [text, 42, 1.5, big, true, null]), { rowCount: 1 });
    await db.execute('INSERT INTO samples VALUES ($1, $2, $3, $4, $5, $6)', ['second', -7, -0.25, -big, false, null]);

    const [row] = await db.query('SELECT s, i, f, CAST(b AS TEXT) AS b_text, flag, absent FROM samples WHERE b = $1', [big]);
    t.ok(row, 'the bigint parameter matches exactly');
    t.equal(row?.s, text);
    t.equal(row?.i, 42);
    t.equal(row?.f, 1.5);
    t.equal(row?.b_text, '9007199254740993');
    t.equal(toBoolean(row?.flag), true);
    t.equal(row?.absent, null);

    const falses = await db.query('SELECT s, flag FROM samples WHERE flag = $1', [false]);
    t.same(
      falses.map((r) => [r.s, toBoolean(r.flag)]),
      [['second', false]],
      'a false parameter matches the false row only',
    );
    const nulls = await db.query('SELECT s FROM samples WHERE absent IS NULL AND i < $1 ORDER BY i', [100]);
    t.same(
      nulls.map((r) => r.s),
      ['second', text],
    );
    const [count] = await db.query('SELECT count(*) AS n FROM samples');
    t.equal(count?.n, 2, 'COUNT(*) reads back as a number');
  });

  t.test('a $n inside a string literal is text, not a parameter, and a parameter may repeat', async (t) => {
    const db = await withNotes(t, []);
    if (!db) return;
    t.same(await db.query("SELECT '$1' AS literal, $1 AS param, $1 AS again", ['x']), [{ literal: '$1', param: 'x', again: 'x' }]);
  });

  t.test('query returns no rows for a statement without a result; execute counts the rows it changed', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    t.same(await db.query('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'first']), []);
    await db.execute('INSERT INTO notes (id, body) VALUES ($1, $2), ($3, $4)', ['b', 'second', 'c', 'third']);
    t.same(await db.execute('UPDATE notes SET body = $1 WHERE id <> $2', ['changed', 'a']), { rowCount: 2 });
    t.same(await db.execute('DELETE FROM notes WHERE id = $1', ['nobody']), { rowCount: 0 });
    t.same(
      await db.query('INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id', ['d', 'fourth']),
      [{ id: 'd' }],
      'RETURNING gives rows',
    );
  });

  t.test('unique and foreign-key violations are told apart from other failures', async (t) => {
    const db = await withNotes(t, [NOTES, NOTE_AUTHORS, NOTE_TAGS]);
    if (!db) return;
    await db.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'first']);
    const duplicate = await db.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'again']).catch((e: unknown) => e);
    t.ok(isDatabaseError(duplicate, 'unique-violation'), 'a second row with the same key is a unique violation');
    const orphan = await db.execute('INSERT INTO note_tags (note_id, tag) VALUES ($1, $2)', ['missing', 'x']).catch((e: unknown) => e);
    t.ok(isDatabaseError(orphan, 'foreign-key-violation'), 'a reference to no row is a foreign-key violation');
    const typo = await db.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    t.ok(isDatabaseError(typo, 'query-failed'), 'bad SQL is query-failed');
    t.match((typo as Error).message, /no_such_table/, "the engine's own message is kept");
  });

  t.test('a transaction commits what its work wrote and returns its result', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    const result = await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'first']);
      await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['b', 'second']);
      return (await tx.query('SELECT count(*) AS n FROM notes'))[0]?.n;
    });
    t.equal(result, 2, 'the work sees its own writes');
    t.same(await db.query('SELECT id FROM notes ORDER BY id'), [{ id: 'a' }, { id: 'b' }]);
  });

  t.test('a transaction rolls back when its work throws, and the error reaches the caller', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    const failure = new Error('the work changed its mind');
    await t.rejects(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'first']);
        throw failure;
      }),
      failure,
    );
    t.same(await db.query('SELECT id FROM notes'), [], 'nothing the work wrote is kept');
  });

  t.test('a statement that fails inside a transaction fails the transaction, even when the work catches it', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    await db.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'first']);
    const error = await db
      .transaction(async (tx) => {
        await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['b', 'second']);
        await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'duplicate']).catch(() => 'ignored');
        return 'done';
      })
      .catch((e: unknown) => e);
    t.ok(isDatabaseError(error, 'unique-violation'), 'the caller gets the failure, with its kind');
    t.match((error as Error).message, /caught.*rolled back/);
    t.same(await db.query('SELECT id FROM notes ORDER BY id'), [{ id: 'a' }], 'the write before the failure is rolled back too');
  });

  t.test('a nested transaction rolls back to its savepoint alone', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'kept']);
      const inner = await tx
        .transaction(async (inner) => {
          await inner.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['b', 'rolled back']);
          await inner.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'duplicate']);
        })
        .catch((e: unknown) => e);
      t.ok(isDatabaseError(inner, 'unique-violation'), 'the nested failure reaches the outer work');
      await tx.transaction(async (inner) => {
        await inner.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['c', 'kept too']);
      });
    });
    t.same(await db.query('SELECT id FROM notes ORDER BY id'), [{ id: 'a' }, { id: 'c' }]);
  });

  t.test('the outer handle refuses to run inside its own transaction, and tx refuses after it ended', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    let leaked: Database | undefined;
    await t.rejects(
      db.transaction(async (tx) => {
        leaked = tx;
        await db.query('SELECT 1 AS one');
      }),
      /inside its own transaction/,
    );
    await t.rejects(leaked!.query('SELECT 1 AS one'), /already ended/);
    t.same(await db.query('SELECT 1 AS one'), [{ one: 1 }], 'the handle works again once the transaction ended');
  });

  t.test('50 concurrent read-increment-write transactions on one counter end at exactly 50', async (t) => {
    const db = await withNotes(t, []);
    if (!db) return;
    await db.executeScript('CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0);');
    const increment = () =>
      db.transaction(async (tx) => {
        const [row] = await tx.query<{ n: number }>('SELECT n FROM counter WHERE id = 1');
        await yieldToOthers(); // give every other transaction the chance to interleave here
        await tx.execute('UPDATE counter SET n = $1 WHERE id = 1', [Number(row!.n) + 1]);
      });
    await Promise.all(Array.from({ length: 50 }, increment));
    t.same(await db.query('SELECT n FROM counter WHERE id = 1'), [{ n: 50 }], 'no increment was lost');
  });

  t.test('migrations apply once, in version order, each recorded; applying again applies nothing', async (t) => {
    const fresh = await subject.fresh(t);
    if (!fresh) return;
    const db = await fresh.open();
    // Listed out of order: version 2 alters the table version 1 creates, so only version order works.
    t.same(await applyMigrations(db, [NOTE_AUTHORS, NOTES]), [1, 2]);
    await db.execute('INSERT INTO notes (id, body, author) VALUES ($1, $2, $3)', ['a', 'first', 'cook']);
    const recorded = await db.query<{ version: number; name: string; applied_at: string }>(
      'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
    );
    t.same(
      recorded.map((r) => [r.version, r.name]),
      [
        [1, 'notes'],
        [2, 'note authors'],
      ],
    );
    for (const r of recorded) t.match(r.applied_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'applied_at is an ISO 8601 UTC time');
    t.same(await applyMigrations(db, [NOTES, NOTE_AUTHORS]), [], 'applying again applies nothing');
    await db.close();

    const again = await fresh.open();
    t.teardown(() => again.close());
    t.same(await applyMigrations(again, [NOTES, NOTE_AUTHORS]), [], 're-opening applies nothing');
    t.same(await applyMigrations(again, [NOTES, NOTE_AUTHORS, NOTE_TAGS]), [3], 'a new migration is applied alone');
    t.same(await again.query('SELECT id, author FROM notes'), [{ id: 'a', author: 'cook' }], 'the data is untouched');
  });

  t.test('four processes starting at once on one database apply each migration once', async (t) => {
    const fresh = await subject.fresh(t);
    if (!fresh) return;
    const runs = await Promise.all(Array.from({ length: 4 }, () => migrateInAnotherProcess(fresh.url)));
    const stderr = runs
      .map((r) => r.stderr)
      .filter(Boolean)
      .join('\n---\n')
      .slice(0, 4000);
    t.same(
      runs.map((r) => r.code),
      [0, 0, 0, 0],
      'every process started and exited cleanly',
      stderr ? { stderr } : {},
    );
    const db = await fresh.open();
    t.teardown(() => db.close());
    t.same(
      (await db.query('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version),
      STARTUP_MIGRATIONS.map((m) => m.version),
    );
    t.same(await db.query('SELECT note FROM startups'), [{ note: 'migrated' }], 'the non-idempotent migration ran exactly once');
  });

  t.test('a database that records a newer version than the code knows is refused', async (t) => {
    const db = await withNotes(t, [NOTES, NOTE_AUTHORS]);
    if (!db) return;
    const refusal = await applyMigrations(db, [NOTES]).catch((e: unknown) => e);
    t.type(refusal, SchemaVersionError);
    t.match((refusal as Error).message, /schema is at version 2, newer than this code knows \(1\)/);
    t.same(
      (await db.query('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version),
      [1, 2],
      'nothing was changed',
    );
    await t.rejects(applyMigrations(db, [NOTES, { ...NOTE_AUTHORS, version: 4 }]), /records schema versions this code does not have \(2\)/);
    await t.rejects(applyMigrations(db, [{ ...NOTES, version: 0 }]), /whole numbers from 1/);
    await t.rejects(applyMigrations(db, [NOTES, { ...NOTE_AUTHORS, version: 1 }]), /Two migrations have version 1/);
  });

  t.test('a migration that fails leaves no trace and the next start tries it again', async (t) => {
    const db = await withNotes(t);
    if (!db) return;
    const broken: Migration = {
      version: 2,
      name: 'broken',
      up: 'CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);',
    };
    await t.rejects(applyMigrations(db, [NOTES, broken]), /no_such_table/);
    t.same(
      (await db.query('SELECT version FROM schema_migrations')).map((r) => r.version),
      [1],
      'the failed migration is not recorded',
    );
    await t.rejects(db.query('SELECT * FROM half_done'), /half_done/, 'its first statement was rolled back with it');
    t.same(await applyMigrations(db, [NOTES, { ...broken, up: 'CREATE TABLE half_done (x INTEGER)' }]), [2], 'the fixed migration applies');
  });

  t.test('data survives close and re-open', async (t) => {
    const fresh = await subject.fresh(t);
    if (!fresh) return;
    const first = await fresh.open();
    await applyMigrations(first, [NOTES]);
    await first.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['a', 'kept across a restart']);
    await first.close();
    const second = await fresh.open();
    t.teardown(() => second.close());
    t.same(await second.query('SELECT id, body FROM notes'), [{ id: 'a', body: 'kept across a restart' }]);
  });

  t.test('ping answers ok while open; once closed, ping says so and calls fail as closed', async (t) => {
    const fresh = await subject.fresh(t);
    if (!fresh) return;
    const db = await fresh.open();
    t.same(await db.ping(1000), { ok: true });
    await db.close();
    await db.close(); // closing twice is harmless
    const after = await db.ping(1000);
    t.equal(after.ok, false);
    t.match(after, { reason: /closed/ });
    const error = await db.query('SELECT 1 AS one').catch((e: unknown) => e);
    t.ok(isDatabaseError(error, 'closed'), 'a call after close fails as closed');
  });
}
