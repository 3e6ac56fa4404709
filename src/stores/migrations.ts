import type { Database, DatabaseLogger, Migration } from './database.ts';

/** The database holds schema versions this code does not know (newer code ran on it, or another application). */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

// One lock for "the schema is being migrated", held per transaction: several processes starting at once
// on one PostgreSQL database apply each migration once. (SQLite's BEGIN IMMEDIATE already serialises them.)
const MIGRATION_LOCK_KEY = 7_350_316_142; // arbitrary, fixed: the same in every Portolan process
const LOCK = 'SELECT pg_advisory_xact_lock($1)';

const SCHEMA_MIGRATIONS = {
  sqlite: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))`,
  postgres: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY, name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
} as const;

/**
 * Brings the schema up to date: applies, in version order, each migration not yet recorded in
 * `schema_migrations`, each in its own transaction with its record. Running it again applies nothing.
 * A migration lower than versions already applied (another interface's range) still applies: recorded
 * versions are checked as a set. Refuses (SchemaVersionError) a database that records a version this code
 * does not have. Returns the versions it applied.
 *
 * @example
 * await applyMigrations(db, [{ version: 1, name: 'notes', up: 'CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)' }]);
 */
export async function applyMigrations(db: Database, migrations: readonly Migration[], logger?: DatabaseLogger): Promise<number[]> {
  const ordered = checkMigrations(migrations);
  // Read committed: after waiting for the lock, each statement sees what the process before us committed.
  const inOrder = { isolation: 'read-committed' } as const;
  const lock = async (tx: Database) => {
    if (tx.engine === 'postgres') await tx.query(LOCK, [MIGRATION_LOCK_KEY]);
  };

  const recorded = await db.transaction(async (tx) => {
    await lock(tx);
    await tx.executeScript(SCHEMA_MIGRATIONS[tx.engine]);
    return (await tx.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => Number(r.version));
  }, inOrder);
  const pending = refuseUnknownVersions(ordered, recorded);

  const applied: number[] = [];
  for (const migration of pending) {
    const done = await db.transaction(async (tx) => {
      await lock(tx);
      // Another process may have applied it while we waited for the lock.
      const [already] = await tx.query('SELECT 1 AS present FROM schema_migrations WHERE version = $1', [migration.version]);
      if (already) return false;
      await tx.executeScript(typeof migration.up === 'string' ? migration.up : migration.up[tx.engine]);
      await tx.execute('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      return true;
    }, inOrder);
    if (done) {
      applied.push(migration.version);
      // The detail: a start says in one line how many were applied (openDatabase).
      logger?.debug?.({ version: migration.version, migration: migration.name }, 'schema migration applied');
    }
  }
  return applied;
}

/** The migrations in version order; duplicate or malformed versions are a bug in the code that lists them. */
function checkMigrations(migrations: readonly Migration[]): Migration[] {
  const seen = new Set<number>();
  for (const m of migrations) {
    if (!Number.isSafeInteger(m.version) || m.version < 1)
      throw new Error(`Migration '${m.name}' has version ${m.version}; versions are whole numbers from 1.`);
    if (seen.has(m.version)) throw new Error(`Two migrations have version ${m.version}; each version is used once.`);
    if (m.name.trim() === '') throw new Error(`Migration ${m.version} has no name.`);
    seen.add(m.version);
  }
  return [...migrations].sort((a, b) => a.version - b.version);
}

/**
 * The migrations still to apply: every known one not yet recorded, in version order. Applied versions are
 * compared as a set, not against the newest: each interface owns a range of versions (accounts 2xx,
 * device-config 3xx, access-session 4xx, ...), so a new migration of one interface is often lower than
 * another interface's newest, and must still apply. What is refused is a recorded version this code does
 * not have: newer code, or another application, migrated this database, and its schema is not ours to guess.
 */
function refuseUnknownVersions(ordered: readonly Migration[], recorded: readonly number[]): Migration[] {
  const known = new Set(ordered.map((m) => m.version));
  const newest = ordered.at(-1)?.version ?? 0;
  const unknown = recorded.filter((v) => !known.has(v));
  if (unknown.some((v) => v > newest)) {
    throw new SchemaVersionError(
      `The database schema is at version ${Math.max(...recorded)}, newer than this code knows (${newest}). ` +
        'Run a Portolan release that has these migrations, or point it at another database.',
    );
  }
  if (unknown.length > 0) {
    throw new SchemaVersionError(
      `The database records schema versions this code does not have (${unknown.join(', ')}); it was migrated by other code.`,
    );
  }
  const done = new Set(recorded);
  return ordered.filter((m) => !done.has(m.version));
}
