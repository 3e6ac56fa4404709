import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { TapTest } from '../lib/tap-test.ts';
import type { DatabaseLogger, Migration } from './database.ts';
import { DatabaseUrlError } from './database-url.ts';
import { SchemaVersionError } from './migrations.ts';
import { describeDatabaseUrl, openDatabase } from './open-database.ts';
import { withTestPostgres } from './test-postgres.ts';

const NOTES: Migration = { version: 1, name: 'notes', up: 'CREATE TABLE notes (id TEXT PRIMARY KEY)' };
const AUTHORS: Migration = { version: 2, name: 'authors', up: 'ALTER TABLE notes ADD COLUMN author TEXT' };

function tempDir(t: TapTest): string {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-open-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function recordingLogger(): DatabaseLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push(`${level} ${message} ${JSON.stringify(fields)}`);
  return { lines, debug: record('debug'), info: record('info'), warn: record('warn') };
}

t.test('sqlite:./data/portolan.db opens a file under the working directory, creating it, with the schema applied', async (t) => {
  const cwd = tempDir(t);
  const logger = recordingLogger();
  const db = await openDatabase('sqlite:./data/portolan.db', { migrations: [NOTES, AUTHORS], logger, cwd });
  t.teardown(() => db.close());
  t.equal(db.engine, 'sqlite');
  t.ok(existsSync(join(cwd, 'data', 'portolan.db')), 'the file and its directory exist');
  t.same(await db.query('SELECT version FROM schema_migrations ORDER BY version'), [{ version: 1 }, { version: 2 }]);
  t.match(logger.lines.join('\n'), /^debug schema migration applied.*"version":2/m, 'each migration at debug');
  const info = logger.lines.filter((line) => line.startsWith('info '));
  t.equal(info.length, 1, 'one info line for the whole open');
  t.match(info[0], /^info database ready: 2 migrations applied .*"database":"sqlite:\.\/data\/portolan\.db"/);
  const again = recordingLogger();
  const reopened = await openDatabase('sqlite:./data/portolan.db', { migrations: [NOTES, AUTHORS], logger: again, cwd });
  t.teardown(() => reopened.close());
  t.equal(again.lines.length, 1, 'a database already migrated: one line');
  t.match(again.lines[0], /^info database ready: schema up to date /);
});

t.test('sqlite::memory: opens an empty database for tests', async (t) => {
  const db = await openDatabase('sqlite::memory:', { migrations: [NOTES] });
  t.teardown(() => db.close());
  t.same(await db.query('SELECT count(*) AS n FROM notes'), [{ n: 0 }]);
});

t.test('an unsupported setting is refused before anything is opened', async (t) => {
  await t.rejects(openDatabase('mysql://root:hunter2@db/portolan', { migrations: [] }), DatabaseUrlError);
  const error = await openDatabase('mysql://root:hunter2@db/portolan', { migrations: [] }).catch((e: unknown) => e);
  t.notMatch((error as Error).message, 'hunter2');
});

t.test('a database newer than the code is refused, and left closed', async (t) => {
  const cwd = tempDir(t);
  const first = await openDatabase('sqlite:portolan.db', { migrations: [NOTES, AUTHORS], cwd });
  await first.close();
  await t.rejects(openDatabase('sqlite:portolan.db', { migrations: [NOTES], cwd }), SchemaVersionError);
  const again = await openDatabase('sqlite:portolan.db', { migrations: [NOTES, AUTHORS], cwd });
  t.teardown(() => again.close());
  t.same(
    await again.query('SELECT version FROM schema_migrations ORDER BY version'),
    [{ version: 1 }, { version: 2 }],
    'the refused start changed nothing',
  );
});

t.test('postgres:// and postgresql:// open PostgreSQL; the log names it without the password', async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  for (const scheme of ['postgres:', 'postgresql:']) {
    const setting = new URL(url);
    setting.protocol = scheme;
    setting.password = 'never-logged';
    const logger = recordingLogger();
    const db = await openDatabase(setting.href, { migrations: [NOTES], logger });
    t.equal(db.engine, 'postgres');
    t.same(await db.query('SELECT version FROM schema_migrations'), [{ version: 1 }]);
    await db.close();
    t.match(logger.lines.join('\n'), describeDatabaseUrl(setting.href), 'the log names the database');
    t.notMatch(logger.lines.join('\n'), 'never-logged', 'but not its password');
  }
});
