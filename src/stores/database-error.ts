import type { DatabaseEngine } from './database.ts';

/**
 * What went wrong, in terms a store can act on whatever the engine:
 * - `unique-violation`, `foreign-key-violation`: the data conflicts (a store answers "conflict");
 * - `transaction-conflict`: a concurrent transaction won (PostgreSQL retries these itself first);
 * - `unavailable`: the server or file cannot be reached right now (a store answers 503; it may come back);
 * - `closed`: the database was closed for good (shutdown);
 * - `query-failed`: anything else the engine refused (usually a bug in the SQL).
 */
export type DatabaseErrorKind =
  | 'unique-violation'
  | 'foreign-key-violation'
  | 'transaction-conflict'
  | 'unavailable'
  | 'closed'
  | 'query-failed';

/** Every failure the storage layer throws. The message never holds credentials; `cause` is the engine's error. */
export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
  readonly kind: DatabaseErrorKind;
  readonly engine: DatabaseEngine;
  /** The engine's own code (a SQLSTATE on PostgreSQL, an extended result code on SQLite), for diagnostics. */
  readonly engineCode: string | undefined;

  constructor(kind: DatabaseErrorKind, engine: DatabaseEngine, message: string, options: { cause?: unknown; engineCode?: string } = {}) {
    super(message, { cause: options.cause });
    this.kind = kind;
    this.engine = engine;
    this.engineCode = options.engineCode;
  }
}

export const isDatabaseError = (error: unknown, kind?: DatabaseErrorKind): error is DatabaseError =>
  error instanceof DatabaseError && (kind === undefined || error.kind === kind);

export const closedError = (engine: DatabaseEngine): DatabaseError =>
  new DatabaseError('closed', engine, `The ${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database has been closed.`);
