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

  /** Refused calls: from inside this handle's own transaction, or once closing. */
  const refusal = (): Error | undefined => {
    try {
      assertNotInsideOwnTransaction(db);
    } catch (error) {
      return error as Error;
    }
    return closing ? closedError('sqlite') : undefined;
  };

  /** Every call from outside a transaction but a grouped statement: queued behind any transaction (and closes the open group). */
  const outside = <T>(op: () => T | Promise<T>): Promise<T> => {
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    group = undefined;
    return serially(op);
  };

  // Group commit: the statements run outside a transaction in one turn of the event loop (the requests read from
  // every socket in one poll) wait for the end of that turn and run, in call order, in one transaction, each
  // settled only once it is committed: one lock and one WAL commit per turn instead of one per statement. A
  // statement that fails alone (a constraint) leaves the others' transaction standing, as SQLite aborts only that
  // statement; a failure that ends the transaction (the disk, the connection) or a failed COMMIT rolls the group
  // back and runs its statements again one by one, each in its own transaction, as they would have run ungrouped.
  let group: Grouped[] | undefined;

  /** A statement outside any transaction: opens a group when `opens` (a write), else joins the open one or runs now. */
  const grouped = <T>(run: (conn: Connection) => T, opens: boolean): Promise<T> => {
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    if (group === undefined) {
      if (!opens) return serially(() => attempt(current(), run));
      const items: Grouped[] = [];
      group = items;
      // Its place in the queue is taken now (after what was called before it, before what is called after).
      void serially(() =>
        endOfTurn().then(() => {
          if (group === items) group = undefined;
          commitGroup(items);
        }),
      );
    }
    return new Promise<T>((resolve, reject) => group!.push({ run, resolve: resolve as (value: unknown) => void, reject }));
  };

  /** Settles every statement of a group; never throws. */
  const commitGroup = (items: readonly Grouped[]): void => {
    if (items.length === 1) {
      runAlone(items[0]!);
      return;
    }
    let conn: Connection;
    try {
      conn = current();
      attempt(conn, (c) => prepared(c, BEGIN_IMMEDIATE.begin).run());
    } catch (error) {
      // No transaction to run them in (the lock was not had within the busy timeout, the file cannot be opened).
      for (const item of items) item.reject(error);
      return;
    }
    const results: unknown[] = [];
    const failures = new Map<number, unknown>();
    for (let i = 0; i < items.length; i++) {
      try {
        results[i] = attempt(conn, items[i]!.run);
      } catch (error) {
        if (!inTransaction(conn)) {
          rerunAlone(conn, items);
          return;
        }
        failures.set(i, error);
      }
    }
    try {
      attempt(conn, (c) => prepared(c, BEGIN_IMMEDIATE.commit).run());
    } catch {
      rerunAlone(conn, items);
      return;
    }
    for (let i = 0; i < items.length; i++) {
      if (failures.has(i)) items[i]!.reject(failures.get(i));
      else items[i]!.resolve(results[i]);
    }
  };

  /** The group's transaction failed as a whole: rolled back, and each statement run again in a transaction of its own. */
  const rerunAlone = (conn: Connection, items: readonly Grouped[]): void => {
    if (inTransaction(conn)) {
      try {
        conn.handle.exec(BEGIN_IMMEDIATE.rollback);
      } catch {
        // A failed ROLLBACK means the connection is gone, and the transaction with it.
        drop(conn);
      }
    }
    for (const item of items) runAlone(item);
  };

  const runAlone = (item: Grouped): void => {
    try {
      item.resolve(attempt(current(), item.run));
    } catch (error) {
      item.reject(error);
    }
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
    // A read runs at once, unless writes of this turn wait for their commit: then after them, in their transaction.
    query: <T extends Row = Row>(sql: string, params: readonly SqlValue[] = []) => grouped((c) => queryRows(c, sql, params) as T[], false),
    // Grouped only when the caller asks (an independent insert on a hot path): every other write runs at once, so a
    // write another handle or process must see (a lease renewal) is committed before the call returns.
    execute: (sql, params = [], options) =>
      options?.grouped
        ? grouped((c) => ({ rowCount: executeCount(c, sql, params) }), true)
        : outside(() => ({ rowCount: attempt(current(), (c) => executeCount(c, sql, params)) })),
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

/** A statement of a commit group, settled once the group's transaction is committed (or its own run failed). */
type Grouped = { run: (conn: Connection) => unknown; resolve(value: unknown): void; reject(error: unknown): void };

/** Resolves in the check phase of this turn of the event loop: after every socket read in its poll phase was handled. */
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const inTransaction = (conn: Connection): boolean => conn.handle.isOpen && conn.handle.isTransaction;

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
