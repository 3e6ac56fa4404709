import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import type { Database, PingResult, Row, SqlValue } from './database.ts';
import { closedError, DatabaseError } from './database-error.ts';
import { createSerialQueue } from './serial-queue.ts';
import { settleWithin } from './settle-within.ts';
import { losesConnection, toSqliteError } from './sqlite-errors.ts';
import { toSqlitePlaceholders } from './sqlite-placeholders.ts';
import { assertNotInsideOwnTransaction, createTransactionScope, runTransaction, type Session } from './transaction-scope.ts';

export const SQLITE_MEMORY = ':memory:';

export type SqliteOptions = {
  /** The database file (relative paths against the working directory), or ':memory:' (tests only). */
  path: string;
  /** How long a statement waits for another process's lock before failing `unavailable` (default 5000 ms). */
  busyTimeoutMs?: number;
};

export type SqliteDatabase = Database & {
  /** TEST HOOK ONLY: closes the connection the way an I/O error would; the next call opens the file again. */
  dropConnectionForTest(): void;
};

type Connection = {
  handle: DatabaseSync;
  statements: Map<string, StatementSync>;
  /** Which file was opened, to notice when the path now names another file (or none). */
  identity: { dev: bigint; ino: bigint } | undefined;
};

const STATEMENT_CACHE_SIZE = 256;
// SQLite's one-writer lock taken up front: a transaction never fails half-way for want of it.
const BEGIN_IMMEDIATE = { begin: 'BEGIN IMMEDIATE', commit: 'COMMIT', rollback: 'ROLLBACK' };

/**
 * The embedded engine: one file, one connection, WAL (readers never wait for the writer), a busy
 * timeout (several processes may share the file) and foreign keys on. Statements and transactions
 * of this process run one at a time through a queue, so async transactions never interleave.
 * A lost connection is opened again on the next call; only `close()` is final.
 * node:sqlite is synchronous: waiting for another process's write lock holds this process's event
 * loop for up to `busyTimeoutMs`, so keep transactions short when processes share the file.
 *
 * @example
 * const db = openSqliteDatabase({ path: './data/portolan.db' });
 * await db.execute('INSERT INTO notes (id, body) VALUES ($1, $2)', ['n1', 'hello']);
 */
export function openSqliteDatabase(options: SqliteOptions): SqliteDatabase {
  const file = options.path === SQLITE_MEMORY ? undefined : resolve(options.path);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const serially = createSerialQueue();
  let connection: Connection | undefined = connect(file, busyTimeoutMs, true);
  let closing = false;
  let closed = false;

  const current = (): Connection => {
    if (closed) throw closedError('sqlite');
    if (connection === undefined || !connection.handle.isOpen) {
      connection = undefined;
      connection = connect(file, busyTimeoutMs, false);
    }
    return connection;
  };
  const drop = (conn: Connection): void => {
    if (conn.handle.isOpen) conn.handle.close();
    if (connection === conn) connection = undefined;
  };
  const attempt = <T>(conn: Connection, op: (conn: Connection) => T): T => {
    try {
      return op(conn);
    } catch (error) {
      if (losesConnection(error)) drop(conn);
      throw toSqliteError(error);
    }
  };

  /** A transaction's statements: they fail, rather than move to a new connection, if theirs was lost. */
  const sessionOn = (conn: Connection): Session => {
    const live = (): Connection => {
      if (connection !== conn || !conn.handle.isOpen) {
        throw new DatabaseError('unavailable', 'sqlite', 'The SQLite connection was lost during the transaction; it was rolled back.');
      }
      return conn;
    };
    return {
      query: async (sql, params) => attempt(live(), (c) => queryRows(c, sql, params)),
      execute: async (sql, params) => attempt(live(), (c) => executeCount(c, sql, params)),
      script: async (sql) => attempt(live(), (c) => c.handle.exec(sql)),
    };
  };

  /** Every call from outside a transaction: refused once closing, then queued behind any transaction. */
  const outside = <T>(op: () => T | Promise<T>): Promise<T> => {
    try {
      assertNotInsideOwnTransaction(db);
    } catch (error) {
      return Promise.reject(error);
    }
    if (closing) return Promise.reject(closedError('sqlite'));
    return serially(op);
  };

  const ping = async (timeoutMs: number): Promise<PingResult> => {
    if (closing) return { ok: false, reason: closedError('sqlite').message };
    const check = async (): Promise<PingResult> => {
      try {
        let conn = current();
        if (file !== undefined && !stillNamesOpenFile(file, conn)) {
          drop(conn);
          conn = current();
        }
        attempt(conn, (c) => prepared(c, 'SELECT count(*) AS n FROM sqlite_schema').get());
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
    };
    // SQLite answers synchronously (a lock wait is bounded by the busy timeout); the timer is the backstop.
    return settleWithin(check(), timeoutMs, () => ({ ok: false, reason: `SQLite did not answer within ${timeoutMs} ms` }));
  };

  const db: SqliteDatabase = {
    engine: 'sqlite',
    query: <T extends Row = Row>(sql: string, params: readonly SqlValue[] = []) =>
      outside(() => attempt(current(), (c) => queryRows(c, sql, params) as T[])),
    execute: (sql, params = []) => outside(() => ({ rowCount: attempt(current(), (c) => executeCount(c, sql, params)) })),
    executeScript: (sql) => outside(() => attempt(current(), (c) => c.handle.exec(sql))),
    // Isolation is always serializable here: one writer at a time, and this process's transactions queue.
    transaction: (work) =>
      outside(() => {
        const session = sessionOn(current());
        return runTransaction(session, BEGIN_IMMEDIATE, db, () => createTransactionScope('sqlite', session, ping), work);
      }),
    ping,
    close: async () => {
      assertNotInsideOwnTransaction(db);
      if (closing) return;
      closing = true;
      await serially(() => {
        closed = true;
        if (connection?.handle.isOpen) connection.handle.close();
        connection = undefined;
      });
    },
    dropConnectionForTest: () => {
      if (connection?.handle.isOpen) connection.handle.close();
    },
  };
  return db;
}

/** Opens the file; `create` only the first time, so a file that vanished later is reported, not silently re-created empty. */
function connect(file: string | undefined, busyTimeoutMs: number, create: boolean): Connection {
  if (file === undefined) {
    if (!create)
      throw new DatabaseError(
        'unavailable',
        'sqlite',
        'The in-memory SQLite database was lost with its connection and cannot be opened again.',
      );
    return { handle: configure(new DatabaseSync(SQLITE_MEMORY, { timeout: busyTimeoutMs })), statements: new Map(), identity: undefined };
  }
  try {
    if (create) mkdirSync(dirname(file), { recursive: true });
    const location = pathToFileURL(file);
    location.searchParams.set('mode', create ? 'rwc' : 'rw');
    const handle = configure(new DatabaseSync(location, { timeout: busyTimeoutMs, enableForeignKeyConstraints: true }));
    const { dev, ino } = statSync(file, { bigint: true });
    return { handle, statements: new Map(), identity: { dev, ino } };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseError('unavailable', 'sqlite', `Cannot open the SQLite database file ${file}: ${reason}`, { cause: error });
  }
}

function configure(handle: DatabaseSync): DatabaseSync {
  try {
    // WAL: readers and the one writer do not block each other; NORMAL sync is safe with WAL (no corruption,
    // at worst the last commits lost on power failure) and much faster than FULL for small writes.
    handle.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
    return handle;
  } catch (error) {
    handle.close();
    throw error;
  }
}

/** Whether the path still names the file this connection opened (a renamed or replaced file does not). */
function stillNamesOpenFile(file: string, conn: Connection): boolean {
  const now = statSync(file, { bigint: true, throwIfNoEntry: false });
  return now !== undefined && conn.identity !== undefined && now.dev === conn.identity.dev && now.ino === conn.identity.ino;
}

function prepared(conn: Connection, sql: string): StatementSync {
  let statement = conn.statements.get(sql);
  if (statement === undefined) {
    // Stores use a fixed set of statements; the bound only guards against SQL built per call.
    if (conn.statements.size >= STATEMENT_CACHE_SIZE) conn.statements.clear();
    statement = conn.handle.prepare(toSqlitePlaceholders(sql));
    conn.statements.set(sql, statement);
  }
  return statement;
}

// node:sqlite binds numbers, bigints, strings and null; booleans are stored as SQLite stores them, 1/0.
const bind = (params: readonly SqlValue[]) => params.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value));

const queryRows = (conn: Connection, sql: string, params: readonly SqlValue[]): Row[] => prepared(conn, sql).all(...bind(params)) as Row[];

const executeCount = (conn: Connection, sql: string, params: readonly SqlValue[]): number =>
  Number(prepared(conn, sql).run(...bind(params)).changes);
