import { setTimeout as delay } from 'node:timers/promises';
import { Pool, types, type CustomTypesConfig, type PoolClient, type QueryConfig } from 'pg';
import type { Database, DatabaseLogger, PingResult, Row, SqlValue, TransactionOptions } from './database.ts';
import { closedError, DatabaseError, isDatabaseError } from './database-error.ts';
import { DatabaseUrlError, redactCredentials } from './database-url.ts';
import { toPostgresError } from './postgres-errors.ts';
import { settleWithin } from './settle-within.ts';
import { assertNotInsideOwnTransaction, createTransactionScope, runTransaction, type Session } from './transaction-scope.ts';

export type PostgresOptions = {
  /** `postgres://user:password@host:5432/database`; never logged or repeated in errors. */
  connectionString: string;
  logger?: DatabaseLogger;
  /** Longest wait for a connection, new or from the pool (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Longest a statement may run: the server cancels it, and the client stops waiting soon after (default 30000 ms). */
  queryTimeoutMs?: number;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** How many times a serializable transaction runs before a conflict is reported (default 30). */
  maxTransactionAttempts?: number;
};

// pg's extended protocol always: one statement per call and typed parameters, as on SQLite.
type Statement = QueryConfig & { queryMode?: 'extended'; query_timeout?: number };

const INT8_OID = 20;
// COUNT(*), BIGINT and BIGSERIAL come back as numbers, as they do from SQLite (pg's default is a string).
const parseInt8 = (text: string): number | bigint => {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : BigInt(text);
};
const typeParsers: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
};

/**
 * PostgreSQL through a `pg` pool. Nothing waits forever (connect and statement timeouts, a ping that
 * answers within its timeout), a lost server never crashes the process (every 'error' event is
 * handled), and the pool reconnects by itself when the server is back. Transactions run on one
 * pooled connection; by default SERIALIZABLE, re-run on a conflict (see `TransactionOptions`).
 *
 * @example
 * const db = openPostgresDatabase({ connectionString: 'postgres://portolan@127.0.0.1:5432/portolan' });
 * const [row] = await db.query<{ n: number }>('SELECT count(*) AS n FROM mapping_charts');
 */
export function openPostgresDatabase(options: PostgresOptions): Database {
  const secrets = secretsOf(options.connectionString);
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const maxAttempts = options.maxTransactionAttempts ?? 30;
  const pool = new Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    // The server cancels a long statement; the client gives up a little later in case the server hangs.
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1_000,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: 'portolan',
    types: typeParsers,
  });
  const lost = (error: Error): void =>
    options.logger?.warn(
      { reason: redactCredentials(error.message, secrets) },
      'PostgreSQL connection lost; a new one is opened on the next use',
    );
  // An idle pooled connection whose server went away: the pool drops it; without a listener the process would crash.
  pool.on('error', lost);
  let closing: Promise<void> | undefined;

  const fail = (error: unknown): never => {
    throw toPostgresError(error, secrets);
  };
  const statement = (sql: string, params: readonly SqlValue[]): Statement => ({ text: sql, values: [...params], queryMode: 'extended' });

  /** Every call from outside a transaction. */
  const outside = <T>(op: () => Promise<T>): Promise<T> => {
    try {
      assertNotInsideOwnTransaction(db);
    } catch (error) {
      return Promise.reject(error);
    }
    if (closing) return Promise.reject(closedError('postgres'));
    return op();
  };

  const ping = async (timeoutMs: number): Promise<PingResult> => {
    if (closing) return { ok: false, reason: closedError('postgres').message };
    const check = pool.query({ text: 'SELECT 1', query_timeout: timeoutMs } as Statement).then(
      (): PingResult => ({ ok: true }),
      (error: unknown): PingResult => ({ ok: false, reason: toPostgresError(error, secrets).message }),
    );
    // The connect wait may be longer than this ping may take; the timer answers first then.
    return settleWithin(check, timeoutMs, () => ({ ok: false, reason: `PostgreSQL did not answer within ${timeoutMs} ms` }));
  };

  /** One pooled connection for `use`; destroyed rather than reused when it failed on the way. */
  const onOneClient = async <T>(use: (session: Session) => Promise<T>): Promise<T> => {
    const client = await pool.connect().catch(fail);
    let broken = false;
    // A checked-out connection has no pool listener: a lost server would otherwise be an uncaught 'error'.
    const onError = (error: Error): void => {
      broken = true;
      lost(error);
    };
    client.on('error', onError);
    try {
      return await use(clientSession(client, statement, fail));
    } catch (error) {
      if (isDatabaseError(error, 'unavailable')) broken = true;
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  };

  const transaction = async <T>(work: (tx: Database) => Promise<T>, transactionOptions: TransactionOptions = {}): Promise<T> => {
    const serializable = (transactionOptions.isolation ?? 'serializable') === 'serializable';
    const statements = { begin: serializable ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN', commit: COMMIT, rollback: 'ROLLBACK' };
    for (let attempt = 1; ; attempt++) {
      try {
        return await onOneClient((session) =>
          runTransaction(session, statements, db, () => createTransactionScope('postgres', session, ping), work),
        );
      } catch (error) {
        if (!serializable || !isDatabaseError(error, 'transaction-conflict') || attempt >= maxAttempts) throw error;
        // Jittered, growing pause so the transactions that collided do not collide again in lockstep.
        await delay(Math.random() * Math.min(100, 2 ** attempt));
      }
    }
  };

  const db: Database = {
    engine: 'postgres',
    query: <T extends Row = Row>(sql: string, params: readonly SqlValue[] = []) =>
      outside(async () => (await pool.query(statement(sql, params)).catch(fail)).rows as T[]),
    execute: (sql, params = []) =>
      outside(async () => ({ rowCount: (await pool.query(statement(sql, params)).catch(fail)).rowCount ?? 0 })),
    executeScript: (sql) => outside(async () => void (await pool.query(sql).catch(fail))),
    transaction: (work, transactionOptions) => outside(() => transaction(work, transactionOptions)),
    ping,
    close: async () => {
      assertNotInsideOwnTransaction(db);
      closing ??= pool.end();
      await closing;
    },
  };
  return db;
}

const COMMIT = 'COMMIT';

/** Statements on one checked-out connection (a transaction's). */
function clientSession(
  client: PoolClient,
  statement: (sql: string, params: readonly SqlValue[]) => Statement,
  fail: (error: unknown) => never,
): Session {
  return {
    query: async (sql, params) => (await client.query(statement(sql, params)).catch(fail)).rows as Row[],
    execute: async (sql, params) => (await client.query(statement(sql, params)).catch(fail)).rowCount ?? 0,
    script: async (sql) => {
      const result = await client.query(sql).catch(fail);
      // PostgreSQL answers COMMIT with ROLLBACK when a statement failed in the transaction and `work` caught
      // that error: the caller must not believe its writes were saved.
      if (sql === COMMIT && result.command === 'ROLLBACK') {
        throw new DatabaseError(
          'query-failed',
          'postgres',
          'The transaction was rolled back: a statement in it failed and its error was caught inside the transaction.',
        );
      }
    },
  };
}

/** The password, in every form it may appear in a message. */
function secretsOf(connectionString: string): string[] {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    throw new DatabaseUrlError('The PostgreSQL connection string is not a valid URL (postgres://user:password@host:5432/database).');
  }
  const password = url.password;
  if (password === '') return [];
  try {
    return [password, decodeURIComponent(password)];
  } catch {
    return [password];
  }
}
