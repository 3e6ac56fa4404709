import type { Migration } from '../../stores/database.ts';

/**
 * Access sessions (versions 400-499 belong to interface H). Times are epoch milliseconds, so expiry
 * is one integer comparison on both engines; the variables are one JSON object per session (TEXT),
 * read and written whole.
 */
export const ACCESS_SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 400,
    name: 'access sessions',
    up: `CREATE TABLE access_sessions (
      id TEXT PRIMARY KEY,
      created_ms BIGINT NOT NULL,
      expires_ms BIGINT NOT NULL,
      variables TEXT NOT NULL
    );
    CREATE INDEX access_sessions_expires ON access_sessions (expires_ms);`,
  },
];
