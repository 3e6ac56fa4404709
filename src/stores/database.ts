/**
 * The storage port every domain store is written against: a small SQL surface that the embedded
 * engine (node:sqlite) and PostgreSQL (pg) both implement, so each store's SQL is written once.
 *
 * SQL is written in the common subset of both dialects, with positional parameters `$1, $2, ...`
 * (the SQLite engine rewrites them to `?1, ?2, ...`). Booleans are bound as booleans and read back
 * as booleans or 0/1 (use `toBoolean`); JSON is stored as TEXT. Integers (INTEGER, BIGINT, COUNT(*))
 * read back as numbers on both engines; bigint parameters bind exactly, but reading back an integer
 * beyond Number.MAX_SAFE_INTEGER is engine-dependent (read it as `CAST(x AS TEXT)`). NUMERIC/DECIMAL
 * values read back as strings on PostgreSQL; timestamps are best stored as ISO 8601 TEXT.
 *
 * Failures are thrown as `DatabaseError` (see database-error.ts) with a `kind` a store can act on
 * (`unique-violation` -> conflict, `unavailable` -> 503), never with credentials in the message.
 */
export type SqlValue = string | number | bigint | boolean | null;
export type Row = Record<string, unknown>;

export type DatabaseEngine = 'sqlite' | 'postgres';

export type PingResult = { ok: true } | { ok: false; reason: string };

export type TransactionOptions = {
  /**
   * `serializable` (the default): the transaction behaves as if it ran alone, on both engines.
   * SQLite gives this by design (one writer at a time, BEGIN IMMEDIATE); PostgreSQL runs the
   * transaction SERIALIZABLE and runs `work` again when a concurrent transaction conflicts, so `work`
   * must have no effect outside the statements it runs on `tx`.
   * `read-committed`: each statement sees what others committed before it started, and `work` runs
   * once. Use it only after taking an explicit lock (the migration runner does, with an advisory lock).
   */
  isolation?: 'serializable' | 'read-committed';
};

export type ExecuteOptions = { grouped?: boolean };

export interface Database {
  readonly engine: DatabaseEngine;
  /** Runs one statement and returns its rows (empty for statements without a result). */
  query<T extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /**
   * Runs one statement and returns how many rows it changed. `grouped`: the statement may be committed together
   * with the other grouped writes of this event-loop turn (SQLite's group commit: one transaction for them,
   * each settled after that commit); for independent inserts on a hot path. PostgreSQL runs it as it is.
   */
  execute(sql: string, params?: readonly SqlValue[], options?: ExecuteOptions): Promise<{ rowCount: number }>;
  /**
   * Runs several statements separated by `;`, without parameters (migrations, fixtures). All or
   * nothing only inside a transaction (PostgreSQL makes a script atomic by itself, SQLite does not).
   */
  executeScript(sql: string): Promise<void>;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * Inside, use only `tx` (the outer handle throws there rather than escape the transaction);
   * `tx.transaction()` nests with a savepoint.
   */
  transaction<T>(work: (tx: Database) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Whether the database answers, within `timeoutMs` whatever happens (a hung server, a closed or
   * lost file). Never throws; the reason never holds credentials.
   */
  ping(timeoutMs: number): Promise<PingResult>;
  /** Closes for good (shutdown); later calls fail. */
  close(): Promise<void>;
}

/** One versioned schema change; applied once, in version order, at start, on both engines. */
export type Migration = {
  version: number;
  name: string;
  /** One SQL script for both engines, or one per engine where the dialects differ. */
  up: string | Readonly<Record<DatabaseEngine, string>>;
};

/** What the storage layer logs through (a pino logger fits); it never receives credentials. */
export type DatabaseLogger = {
  /** The detail of a start (each migration applied); optional, a logger without it drops the detail. */
  debug?(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
};

export const toBoolean = (value: unknown): boolean => value === true || value === 1 || value === 1n || value === '1' || value === 't';
