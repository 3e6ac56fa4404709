import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { Database } from '../../stores/database.ts';

/** The diagnostics API's login sessions (C): the value of the `ssosession` cookie and what it opens. */
export type SessionStore = {
  /** A new session for an account: returns the cookie value (256 random bits, base64url); stores only its SHA-256 digest. */
  create(account: string): Promise<{ token: string; expiresMs: number }>;
  /**
   * The account of a live session, touching its last use; undefined when unknown, past its lifetime, or
   * idle longer than the idle time (such a row is deleted). Values longer than 256 characters are
   * refused without hashing.
   */
  verify(token: string): Promise<string | undefined>;
  /** Ends a session (logout: not in the spec, for tests and future use). */
  end(token: string): Promise<void>;
};

export type SessionStoreOptions = {
  clock: Clock;
  /** Longest life of a session from its creation, in seconds; touching it never extends this. */
  lifetimeSeconds: number;
  /** A session ends after this many seconds without a `verify`. */
  idleSeconds: number;
};

/** Longest cookie value looked up; a longer one cannot be ours and is refused before it is hashed. */
const MAX_TOKEN_LENGTH = 256;
/** Most expired rows removed per new session: a login never pays for a large backlog at once. */
const CLEANUP_BATCH = 100;

/** Sessions are kept only as SHA-256 digests: a copy of the store opens no session. */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Diagnostics sessions on the SQL port (`diagnostics_sessions`), so they survive a restart and every
 * process on one store shares them. A session ends at `created + lifetime` whatever happens, and
 * sooner after `idle` seconds without use. Expired rows are removed, a bounded batch at a time, as
 * new sessions are created.
 *
 * @example
 * const sessions = createSessionStore(db, { clock, lifetimeSeconds: 28_800, idleSeconds: 1800 });
 * const { token } = await sessions.create('diagnostics/alice');
 * await sessions.verify(token); // 'diagnostics/alice'
 */
export function createSessionStore(db: Database, options: SessionStoreOptions): SessionStore {
  const { clock } = options;
  const lifetimeMs = options.lifetimeSeconds * 1000;
  const idleMs = options.idleSeconds * 1000;
  const usable = (token: string) => token.length > 0 && token.length <= MAX_TOKEN_LENGTH;

  return {
    async create(account) {
      const now = clock.nowMs();
      // Past its lifetime, or idle too long: the subquery bounds the delete (LIMIT works there on both engines).
      await db.execute(
        `DELETE FROM diagnostics_sessions WHERE token_hash IN (
           SELECT token_hash FROM diagnostics_sessions WHERE expires_at_ms <= $1 OR last_seen_ms <= $2 LIMIT ${CLEANUP_BATCH})`,
        [now, now - idleMs],
      );
      const token = randomBytes(32).toString('base64url');
      const expiresMs = now + lifetimeMs;
      await db.execute(
        'INSERT INTO diagnostics_sessions (token_hash, account, created_at_ms, last_seen_ms, expires_at_ms) VALUES ($1, $2, $3, $3, $4)',
        [digest(token), account, now, expiresMs],
      );
      return { token, expiresMs };
    },

    async verify(token) {
      if (!usable(token)) return undefined;
      const hash = digest(token);
      const now = clock.nowMs();
      const [row] = await db.query<{ account: string; last_seen_ms: number | string; expires_at_ms: number | string }>(
        'SELECT account, last_seen_ms, expires_at_ms FROM diagnostics_sessions WHERE token_hash = $1',
        [hash],
      );
      if (!row) return undefined;
      if (Number(row.expires_at_ms) <= now || now - Number(row.last_seen_ms) >= idleMs) {
        // Only if it is still over: another process may have touched it since the read.
        await db.execute('DELETE FROM diagnostics_sessions WHERE token_hash = $1 AND (expires_at_ms <= $2 OR last_seen_ms <= $3)', [
          hash,
          now,
          now - idleMs,
        ]);
        return undefined;
      }
      // Never moves last_seen backwards (two processes, two requests).
      await db.execute('UPDATE diagnostics_sessions SET last_seen_ms = $2 WHERE token_hash = $1 AND last_seen_ms < $2', [hash, now]);
      return row.account;
    },

    async end(token) {
      if (!usable(token)) return;
      await db.execute('DELETE FROM diagnostics_sessions WHERE token_hash = $1', [digest(token)]);
    },
  };
}
