// Several processes starting at once on one store (`portolan start --workers N`, or N machines) each run the
// migrations: every migration is applied exactly once, whoever applies it. SQLite: separate processes on one
// file (BEGIN IMMEDIATE serialises them); PostgreSQL: separate pools on one database (the advisory lock does).
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { TapTest } from '../lib/tap-test.ts';
import type { Database, Migration } from './database.ts';
import { applyMigrations } from './migrations.ts';
import { openPostgresDatabase } from './postgres.ts';
import { openSqliteDatabase } from './sqlite.ts';
import { withTestPostgres } from './test-postgres.ts';
import { tempSqliteUrl } from '../app/test-system.ts';

const MIGRATORS = 4;
// Each one builds on the one before: applied twice, or out of order, a later one fails.
const MIGRATIONS: Migration[] = [
  { version: 1, name: 'notes', up: 'CREATE TABLE notes (id TEXT PRIMARY KEY)' },
  { version: 2, name: 'note bodies', up: 'ALTER TABLE notes ADD COLUMN body TEXT' },
  { version: 3, name: 'tags', up: 'CREATE TABLE tags (note TEXT NOT NULL, tag TEXT NOT NULL)' },
  { version: 4, name: 'tag index', up: 'CREATE INDEX tags_by_note ON tags (note)' },
  { version: 5, name: 'note owners', up: 'ALTER TABLE notes ADD COLUMN owner TEXT' },
];
const VERSIONS = MIGRATIONS.map((m) => m.version);

const recorded = async (db: Database) =>
  (await db.query('SELECT version FROM schema_migrations ORDER BY version')).map((r) => Number(r.version));

/** Every migration was applied by exactly one migrator, and recorded once. */
async function checkOneAppliedSet(t: TapTest, applied: readonly number[][], db: Database) {
  t.same(
    applied.flat().sort((a, b) => a - b),
    VERSIONS,
    `the ${MIGRATORS} migrators applied each migration once between them`,
  );
  t.same(await recorded(db), VERSIONS, 'each version recorded once');
  await db.execute('INSERT INTO notes (id, body, owner) VALUES ($1, $2, $3)', ['n1', 'hello', 'cook']);
  t.same(await db.query('SELECT id, body, owner FROM notes'), [{ id: 'n1', body: 'hello', owner: 'cook' }], 'the schema is whole');
}

t.test(`SQLite: ${MIGRATORS} processes migrating one file at once end with one applied set`, async (t) => {
  const file = join(tempSqliteUrl(t).dir, 'shared.db');
  const migrations = new URL('migrations.ts', import.meta.url).href;
  const sqlite = new URL('sqlite.ts', import.meta.url).href;
  // Each process opens the file, says so, and waits for the word to go: they migrate together, not one by one.
  const script = `
    const { applyMigrations } = await import(${JSON.stringify(migrations)});
    const { openSqliteDatabase } = await import(${JSON.stringify(sqlite)});
    const db = openSqliteDatabase({ path: ${JSON.stringify(file)}, busyTimeoutMs: 20000 });
    process.stdout.write('ready\\n');
    await new Promise((resolve) => process.stdin.once('data', resolve));
    const applied = await applyMigrations(db, ${JSON.stringify(MIGRATIONS)});
    await db.close();
    process.stdout.write(JSON.stringify(applied));
    process.exit(0);`;
  const children = Array.from({ length: MIGRATORS }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
    t.teardown(() => child.kill('SIGKILL'));
    const output = { out: '', err: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output.err += chunk));
    const ready = new Promise<void>((resolve) => child.stdout.on('data', () => output.out.startsWith('ready\n') && resolve()));
    return { child, output, ready, exit: once(child, 'exit') };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const { child } of children) child.stdin.write('go\n');
  const runs = children.map(async ({ output, exit }) => {
    const [code] = await exit;
    t.equal(code, 0, `a migrator exits 0${output.err ? `: ${output.err}` : ''}`);
    return JSON.parse(output.out.slice('ready\n'.length) || '[]') as number[];
  });
  const applied = await Promise.all(runs);
  const db = openSqliteDatabase({ path: file });
  t.teardown(() => db.close());
  await checkOneAppliedSet(t, applied, db);
});

t.test(`PostgreSQL: ${MIGRATORS} connections migrating one database at once end with one applied set`, async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  const handles = Array.from({ length: MIGRATORS }, () => openPostgresDatabase({ connectionString: url }));
  t.teardown(() => Promise.all(handles.map((db) => db.close())));
  const applied = await Promise.all(handles.map((db) => applyMigrations(db, MIGRATIONS)));
  await checkOneAppliedSet(t, applied, handles[0]!);
});
