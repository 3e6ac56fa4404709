import { DatabaseError, type DatabaseErrorKind } from './database-error.ts';
import { redactCredentials } from './database-url.ts';

/** An error the server sent (it carries a SQLSTATE); anything else is the connection failing. */
type ServerError = Error & { code: string; severity: string };

const isServerError = (error: unknown): error is ServerError =>
  error instanceof Error &&
  typeof (error as Partial<ServerError>).severity === 'string' &&
  typeof (error as Partial<ServerError>).code === 'string';

/** SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) a store can act on. */
function kindOf(sqlstate: string): DatabaseErrorKind {
  if (sqlstate === '23505') return 'unique-violation';
  if (sqlstate === '23503') return 'foreign-key-violation';
  if (sqlstate === '40001' || sqlstate === '40P01') return 'transaction-conflict';
  // Connection exceptions, server shutting down or starting, too many connections, statement timeout.
  if (sqlstate.startsWith('08') || sqlstate.startsWith('57P') || sqlstate === '53300' || sqlstate === '57014') return 'unavailable';
  return 'query-failed';
}

/** The driver's error as a `DatabaseError`, its message cleared of connection strings and the password. */
export function toPostgresError(error: unknown, secrets: readonly string[]): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const message = redactCredentials(error instanceof Error ? error.message : String(error), secrets);
  if (isServerError(error)) {
    const kind = kindOf(error.code);
    return new DatabaseError(kind, 'postgres', kind === 'unavailable' ? `PostgreSQL is unavailable: ${message}` : message, {
      cause: error,
      engineCode: error.code,
    });
  }
  // No SQLSTATE: refused, reset, timed out, or the client gave up waiting (query_timeout). The driver's
  // error is not kept as `cause`: such errors may carry the connection settings in their properties.
  const code = typeof (error as { code?: unknown } | null)?.code === 'string' ? (error as { code: string }).code : undefined;
  return new DatabaseError(
    'unavailable',
    'postgres',
    `PostgreSQL is unavailable: ${message}`,
    code === undefined ? {} : { engineCode: code },
  );
}
