import { DatabaseError, type DatabaseErrorKind } from './database-error.ts';

// SQLite result codes (https://sqlite.org/rescode.html): the primary code is the low byte.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;
const SQLITE_READONLY_DBMOVED = 1032;
const SQLITE_CONSTRAINT_FOREIGNKEY = 787;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
const SQLITE_CONSTRAINT_UNIQUE = 2067;

/** The extended result code node:sqlite attaches to its errors, if any. */
export const sqliteCode = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { errcode?: unknown }).errcode === 'number'
    ? (error as { errcode: number }).errcode
    : undefined;

/**
 * Whether the connection is no good any more after this error (the file went away, the disk failed,
 * the file is not a database): the engine closes it and opens the file again on the next call.
 */
export function losesConnection(error: unknown): boolean {
  const code = sqliteCode(error);
  if (code === undefined) return false;
  const primary = code & 0xff;
  return (
    primary === SQLITE_IOERR ||
    primary === SQLITE_CANTOPEN ||
    primary === SQLITE_NOTADB ||
    primary === SQLITE_CORRUPT ||
    code === SQLITE_READONLY_DBMOVED
  );
}

function kindOf(code: number | undefined): DatabaseErrorKind {
  if (code === undefined) return 'query-failed';
  if (code === SQLITE_CONSTRAINT_UNIQUE || code === SQLITE_CONSTRAINT_PRIMARYKEY) return 'unique-violation';
  if (code === SQLITE_CONSTRAINT_FOREIGNKEY) return 'foreign-key-violation';
  const primary = code & 0xff;
  if ([SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB].includes(primary))
    return 'unavailable';
  if (code === SQLITE_READONLY_DBMOVED) return 'unavailable';
  return 'query-failed';
}

/** The engine's error as a `DatabaseError` (the message is SQLite's own: it holds no credentials). */
export function toSqliteError(error: unknown): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const code = sqliteCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const kind = kindOf(code);
  return new DatabaseError(kind, 'sqlite', kind === 'unavailable' ? `The SQLite database is unavailable: ${message}` : message, {
    cause: error,
    ...(code === undefined ? {} : { engineCode: String(code) }),
  });
}
