// Migrations of several interfaces compose: each owns a range of versions, so a new migration of one is
// often lower than another's newest already applied. Run on both engines, like the database contract.
import t from 'tap';
import type { TapTest } from '../lib/tap-test.ts';
import type { Database, Migration } from './database.ts';
import { applyMigrations, SchemaVersionError } from './migrations.ts';
import { openPostgresDatabase } from './postgres.ts';
import { openSqliteDatabase, SQLITE_MEMORY } from './sqlite.ts';
import { withTestPostgres, withTestSchema } from './test-postgres.ts';

// Two interfaces' ranges, like device-config (3xx) and access-session (4xx).
const DEVICES: Migration = { version: 300, name: 'devices', up: 'CREATE TABLE devices (id TEXT PRIMARY KEY)' };
const DEVICE_NAMES: Migration = { version: 301, name: 'device names', up: 'ALTER TABLE devices ADD COLUMN name TEXT' };
const SESSIONS: Migration = { version: 400, name: 'sessions', up: 'CREATE TABLE sessions (id TEXT PRIMARY KEY)' };
const SESSION_OWNERS: Migration = { version: 401, name: 'session owners', up: 'ALTER TABLE sessions ADD COLUMN owner TEXT' };

const recordedVersions = async (db: Database) =>
  (await db.query('SELECT version FROM schema_migrations ORDER BY version')).map((r) => Number(r.version));

/** The behaviour, registered on `t` for one engine; `open` gives a fresh, empty database closed when its test ends. */
function composeSuite(t: TapTest, open: (t: TapTest) => Promise<Database>): void {
  t.test("a database at one interface's newest version takes another interface's lower, newer migrations", async (t) => {
    const db = await open(t);
    t.same(await applyMigrations(db, [SESSIONS, SESSION_OWNERS]), [400, 401], 'the database is at access-session 401');
    await db.execute('INSERT INTO sessions (id, owner) VALUES ($1, $2)', ['s1', 'cook']);

    t.same(await applyMigrations(db, [SESSIONS, SESSION_OWNERS, DEVICES]), [300], 'a new interface below 401 is applied');
    t.same(
      await applyMigrations(db, [SESSIONS, SESSION_OWNERS, DEVICES, DEVICE_NAMES]),
      [301],
      "that interface's next migration is applied too",
    );
    t.same(await applyMigrations(db, [DEVICE_NAMES, DEVICES, SESSION_OWNERS, SESSIONS]), [], 'running again applies nothing');
    t.same(await recordedVersions(db), [300, 301, 400, 401], 'each is recorded once');
    await db.execute('INSERT INTO devices (id, name) VALUES ($1, $2)', ['d1', 'bridge']);
    t.same(await db.query('SELECT id, owner FROM sessions'), [{ id: 's1', owner: 'cook' }], "the other interface's data is untouched");
  });

  t.test('several missing migrations below the newest apply in version order', async (t) => {
    const db = await open(t);
    await applyMigrations(db, [SESSIONS, SESSION_OWNERS]);
    // 301 alters the table 300 creates: listed first, it only works if they run in version order.
    t.same(await applyMigrations(db, [DEVICE_NAMES, SESSIONS, DEVICES, SESSION_OWNERS]), [300, 301]);
  });

  t.test('a database recording a version this code does not know is refused, whether above or below its newest', async (t) => {
    const db = await open(t);
    await applyMigrations(db, [DEVICES, SESSIONS, SESSION_OWNERS]);

    const newer = await applyMigrations(db, [DEVICES, DEVICE_NAMES, SESSIONS]).catch((e: unknown) => e);
    t.type(newer, SchemaVersionError, 'an older release (without 401) is refused');
    t.match((newer as Error).message, /version 401, newer than this code knows \(400\)/);

    const other = await applyMigrations(db, [DEVICE_NAMES, SESSIONS, SESSION_OWNERS]).catch((e: unknown) => e);
    t.type(other, SchemaVersionError, 'code that lacks a lower recorded version (300) is refused too');
    t.match((other as Error).message, /does not have \(300\)/);
    t.same(await recordedVersions(db), [300, 400, 401], 'neither refused run applied anything (301 was not applied)');
  });
}

t.test('SQLite: migrations of several interfaces compose', async (t) => {
  composeSuite(t, async (t) => {
    const db = openSqliteDatabase({ path: SQLITE_MEMORY });
    t.teardown(() => db.close());
    return db;
  });
});

t.test('PostgreSQL: migrations of several interfaces compose', async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  composeSuite(t, async (t) => {
    const db = openPostgresDatabase({ connectionString: await withTestSchema(t, url) });
    t.teardown(() => db.close());
    return db;
  });
});
