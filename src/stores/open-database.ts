import type { Database, DatabaseLogger, Migration } from './database.ts';
import { describeDatabaseUrl, parseDatabaseUrl } from './database-url.ts';
import { applyMigrations } from './migrations.ts';
import { openSqliteDatabase } from './sqlite.ts';

export { describeDatabaseUrl } from './database-url.ts';

export type OpenDatabaseOptions = {
  /** Applied at open, in version order; the database is refused if it is newer than these. */
  migrations: readonly Migration[];
  logger?: DatabaseLogger;
  /** Relative `sqlite:` paths are resolved against this (default: the working directory). */
  cwd?: string;
  /** SQLite: lock wait; PostgreSQL: connect wait (defaults: 5000 ms). */
  connectTimeoutMs?: number;
  /** PostgreSQL: longest statement (default 30000 ms). */
  queryTimeoutMs?: number;
};

/**
 * Opens the database one setting names and brings its schema up to date:
 * `sqlite:./data/portolan.db` (embedded, the default), `sqlite::memory:` (tests) or
 * `postgres://user:password@host:5432/database`. Anything else is refused with a clear error that
 * does not repeat the setting. When migrating fails, the database is closed and the error thrown.
 *
 * @example
 * const db = await openDatabase('sqlite:./data/portolan.db', { migrations: ALL_MIGRATIONS, logger });
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const location = parseDatabaseUrl(url, options.cwd);
  const db =
    location.engine === 'sqlite'
      ? openSqliteDatabase({
          path: location.path,
          ...(options.connectTimeoutMs === undefined ? {} : { busyTimeoutMs: options.connectTimeoutMs }),
        })
      : (await import('./postgres.ts')).openPostgresDatabase({
          connectionString: location.connectionString,
          ...(options.logger ? { logger: options.logger } : {}),
          ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
          ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
        });
  try {
    const applied = await applyMigrations(db, options.migrations, options.logger);
    // One line per start (each migration applied is logged at debug).
    options.logger?.info(
      { database: describeDatabaseUrl(url), engine: db.engine, migrationsApplied: applied.length },
      `database ready: ${migrationSummary(applied.length)}`,
    );
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** What a start's database line says of the schema. */
const migrationSummary = (applied: number) =>
  applied === 0 ? 'schema up to date' : `${applied} migration${applied === 1 ? '' : 's'} applied`;
