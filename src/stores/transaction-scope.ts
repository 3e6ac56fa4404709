import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database, DatabaseEngine, PingResult, Row, SqlValue } from './database.ts';
import { DatabaseError } from './database-error.ts';
import { createSerialQueue } from './serial-queue.ts';

/** The statements of one connection that a transaction holds, as each engine provides them. */
export type Session = {
  query(sql: string, params: readonly SqlValue[]): Promise<Row[]>;
  execute(sql: string, params: readonly SqlValue[]): Promise<number>;
  script(sql: string): Promise<void>;
};

export type TransactionStatements = { begin: string; commit: string; rollback: string };

/**
 * The handles whose transaction the current async context is running `work` for. Calling such a
 * handle from inside its own transaction is a bug: on SQLite it would wait for the transaction to
 * end (a deadlock), on PostgreSQL it would run outside the transaction. Both engines throw instead.
 */
const heldHandles = new AsyncLocalStorage<ReadonlySet<object>>();

export function assertNotInsideOwnTransaction(handle: object): void {
  if (heldHandles.getStore()?.has(handle)) {
    throw new Error('A database handle was used inside its own transaction; use the `tx` handle passed to the transaction callback.');
  }
}

/**
 * BEGIN, run `work` with a handle for the transaction, COMMIT; ROLLBACK when anything throws.
 * `owner` is the handle the transaction was started from (held while `work` runs).
 */
export async function runTransaction<T>(
  session: Session,
  statements: TransactionStatements,
  owner: object,
  scope: () => TransactionScope,
  work: (tx: Database) => Promise<T>,
): Promise<T> {
  await session.script(statements.begin);
  const { handle, end, failure } = scope();
  try {
    const held = heldHandles.getStore();
    const result = await heldHandles.run(new Set(held).add(owner), () => work(handle));
    end();
    const caught = failure();
    if (caught) throw caughtInside(caught, handle.engine);
    await session.script(statements.commit);
    return result;
  } catch (error) {
    end();
    // A failed ROLLBACK means the connection is gone, and with it the transaction: the first error is the story.
    await session.script(statements.rollback).catch(() => undefined);
    throw error;
  }
}

export type TransactionScope = {
  handle: Database;
  end(): void;
  /** The first statement failure in this scope (not in a nested one), if any. */
  failure(): unknown;
};

/**
 * A statement failed inside the transaction and `work` caught the error and went on. PostgreSQL has
 * aborted such a transaction (its COMMIT would silently roll back); SQLite would commit the rest.
 * Both engines refuse it the same way, keeping the failure's kind (a conflict is still retried).
 */
function caughtInside(failure: unknown, engine: DatabaseEngine): DatabaseError {
  const first = failure instanceof DatabaseError ? failure : undefined;
  return new DatabaseError(
    first?.kind ?? 'query-failed',
    engine,
    `A statement failed inside the transaction and its error was caught, so the transaction was rolled back ` +
      `(to recover from a statement that may fail, run it in a nested tx.transaction()). The statement failed with: ` +
      `${failure instanceof Error ? failure.message : String(failure)}`,
    { cause: failure, ...(first?.engineCode === undefined ? {} : { engineCode: first.engineCode }) },
  );
}

/**
 * The `tx` handle given to transaction work: statements go to the transaction's session, one at a
 * time; `tx.transaction()` nests with a savepoint. Using it after the transaction ended throws.
 */
export function createTransactionScope(
  engine: DatabaseEngine,
  session: Session,
  ping: (timeoutMs: number) => Promise<PingResult>,
  depth = 0,
): TransactionScope {
  const serially = createSerialQueue();
  let ended = false;
  let failure: unknown;
  const statement = <T>(op: () => Promise<T>): Promise<T> =>
    guard(() =>
      op().catch((error: unknown) => {
        failure ??= error;
        throw error;
      }),
    );
  const guard = <T>(op: () => Promise<T>): Promise<T> => {
    try {
      assertNotInsideOwnTransaction(handle);
    } catch (error) {
      return Promise.reject(error);
    }
    return serially(() => {
      if (ended)
        throw new Error('This transaction has already ended; a statement was sent to its `tx` handle afterwards (a missing await?).');
      return op();
    });
  };
  const savepoint = `portolan_savepoint_${depth + 1}`;
  const handle: Database = {
    engine,
    query: <R extends Row = Row>(sql: string, params: readonly SqlValue[] = []) =>
      statement(() => session.query(sql, params) as Promise<R[]>),
    execute: (sql, params = []) => statement(async () => ({ rowCount: await session.execute(sql, params) })),
    executeScript: (sql) => statement(() => session.script(sql)),
    // A nested transaction that failed was rolled back to its savepoint: this scope is still sound.
    transaction: (work) =>
      guard(() =>
        runTransaction(
          session,
          {
            begin: `SAVEPOINT ${savepoint}`,
            commit: `RELEASE SAVEPOINT ${savepoint}`,
            rollback: `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`,
          },
          handle,
          () => createTransactionScope(engine, session, ping, depth + 1),
          work,
        ),
      ),
    ping,
    close: () => Promise.reject(new Error('close() was called inside a transaction; close the database after the transaction ends.')),
  };
  return {
    handle,
    end: () => {
      ended = true;
    },
    failure: () => failure,
  };
}
