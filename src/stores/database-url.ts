import { resolve } from 'node:path';
import { SQLITE_MEMORY } from './sqlite.ts';

/** Where the one database setting points. */
export type DatabaseLocation = { engine: 'sqlite'; path: string } | { engine: 'postgres'; connectionString: string };

export class DatabaseUrlError extends Error {
  override readonly name = 'DatabaseUrlError';
}

/**
 * Decodes the database setting: `sqlite:<path>` (relative to the working directory), `sqlite::memory:`,
 * or `postgres://...` / `postgresql://...`. The error never repeats the setting (it may hold a password).
 *
 * @example
 * parseDatabaseUrl('sqlite:./data/portolan.db') // { engine: 'sqlite', path: '/srv/portolan/data/portolan.db' }
 */
export function parseDatabaseUrl(url: string, cwd: string = process.cwd()): DatabaseLocation {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { engine: 'postgres', connectionString: trimmed };
  if (/^sqlite:/i.test(trimmed)) {
    // `sqlite:///abs/file.db` (URL style) and `sqlite:/abs/file.db` both name /abs/file.db.
    const rest = trimmed.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (rest === '')
      throw new DatabaseUrlError(
        'The database setting `sqlite:` needs a file path, e.g. sqlite:./data/portolan.db (or sqlite::memory: for tests).',
      );
    return { engine: 'sqlite', path: rest === SQLITE_MEMORY ? SQLITE_MEMORY : resolve(cwd, rest) };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1];
  throw new DatabaseUrlError(
    `Unsupported database setting${scheme ? ` (scheme '${scheme}:')` : ''}: use sqlite:<path>, sqlite::memory: or postgres://user@host:5432/database.`,
  );
}

/**
 * The setting in a form fit for logs: the password (in the authority or as a `password` parameter) removed.
 *
 * @example
 * describeDatabaseUrl('postgres://app:s3cret@db:5432/portolan') // 'postgres://app@db:5432/portolan'
 */
export function describeDatabaseUrl(url: string): string {
  return redactCredentials(url.trim());
}

/**
 * Removes passwords from any text that may hold a connection string: `scheme://user:password@` becomes
 * `scheme://user@`, `password=...` parameters become `password=[redacted]`, and any `secrets` given
 * (a password known to the caller) are replaced wherever they appear.
 */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  let out = text
    // Greedy up to the last `@` of the authority: a password may (wrongly, unencoded) hold an `@` itself.
    .replace(/([a-z][a-z0-9+.-]*:\/\/)([^:@/\s?#]*):[^\s/]*@/gi, '$1$2@')
    .replace(/([?&;\s]password=)[^&;\s]*/gi, '$1[redacted]');
  for (const secret of secrets) if (secret.length > 0) out = out.replaceAll(secret, '[redacted]');
  return out;
}
