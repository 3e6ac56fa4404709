import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../stores/database.ts';

/** A token as handed to a client: its value and when it was issued and expires. */
export type IssuedToken = { token: string; startMs: number; expiresMs: number; timeoutSeconds: number };

export type TokenGrant = { username: string; address: string; access: IssuedToken; refresh: IssuedToken };

export type TokenServiceOptions = {
  clock: Clock;
  /** Who issues the tokens (`device`, `central`): a token of one role is unknown to another. */
  issuer: string;
  /** Lifetime of an access token in seconds (the real products: 1200). */
  accessTimeoutSeconds: number;
  /** Lifetime of a refresh token in seconds (the real management system: 36000). */
  refreshTimeoutSeconds?: number;
};

export interface TokenService {
  /** Issues an access token and a refresh token for a user whose credentials were just checked. */
  issue(username: string, address: string): Promise<TokenGrant>;
  /** The user an access token belongs to; undefined when it is unknown or expired. */
  verify(token: string): Promise<{ username: string } | undefined>;
  /**
   * A new access token and a new refresh token (a full lifetime from now) for a valid refresh token, which
   * is used up; undefined when it is unknown, expired or already used (a reuse also revokes every token of
   * its login).
   */
  exchange(refreshToken: string, address: string): Promise<TokenGrant | undefined>;
}

/** Tokens are kept only as SHA-256 digests: a copy of the store hands out no usable token. */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** 160 random bits in the real products' alphabet (upper-case letters and digits, base32). */
function newToken(): string {
  const bytes = randomBytes(20);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** Longest token anyone could have been given; longer header values are refused unhashed. */
const MAX_TOKEN_LENGTH = 64;

/**
 * Authentication tokens of the token logins (the device's and the management system's
 * `POST /mgmt/shared/authn/login`), on the SQL port so they survive a restart and are shared by
 * every process on one store. Expired rows are removed as new tokens are issued.
 *
 * Refresh tokens rotate (OAuth 2.0 Security BCP, RFC 9700 4.14.2): an exchange uses its refresh token up and
 * answers a new one with a full lifetime, so a client that exchanges at least once per refresh lifetime never
 * sends its password again. A used refresh token is kept (as `rotated`) until it would have expired: shown
 * again, it is refused and every token of its login (its family) is revoked, since either the client or a
 * thief holds a copy, and the device cannot tell which.
 */
export function createTokenService(db: Database, options: TokenServiceOptions): TokenService {
  const { clock, issuer } = options;
  const refreshTimeout = options.refreshTimeoutSeconds ?? 36_000;

  const insert = async (
    sql: Database,
    kind: 'access' | 'refresh',
    username: string,
    address: string,
    family: string,
    timeoutSeconds: number,
  ): Promise<IssuedToken> => {
    const token = newToken();
    const startMs = clock.nowMs();
    const expiresMs = startMs + timeoutSeconds * 1000;
    await sql.execute(
      'INSERT INTO auth_tokens (token_hash, issuer, kind, username, address, issued_at_ms, expires_at_ms, family) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [digest(token), issuer, kind, username, address, startMs, expiresMs, family],
    );
    return { token, startMs, expiresMs, timeoutSeconds };
  };
  /** A login's or an exchange's pair of tokens, in `family` (one per login); expired rows of the issuer go first. */
  const grant = async (sql: Database, username: string, address: string, family: string): Promise<TokenGrant> => {
    await sql.execute('DELETE FROM auth_tokens WHERE issuer = $1 AND expires_at_ms <= $2', [issuer, clock.nowMs()]);
    const access = await insert(sql, 'access', username, address, family, options.accessTimeoutSeconds);
    const refresh = await insert(sql, 'refresh', username, address, family, refreshTimeout);
    return { username, address, access, refresh };
  };

  return {
    // A family is named by a random value of its own: not a token, never sent.
    issue: (username, address) => grant(db, username, address, newToken()),
    async verify(token) {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
      const [row] = await db.query<{ username: string; expires_at_ms: number }>(
        "SELECT username, expires_at_ms FROM auth_tokens WHERE token_hash = $1 AND issuer = $2 AND kind = 'access'",
        [digest(token), issuer],
      );
      return row && Number(row.expires_at_ms) > clock.nowMs() ? { username: row.username } : undefined;
    },
    async exchange(refreshToken, address) {
      if (refreshToken.length === 0 || refreshToken.length > MAX_TOKEN_LENGTH) return undefined;
      const hash = digest(refreshToken);
      // One transaction: of two exchanges with the same refresh token, one rotates it and the other sees it used.
      return db.transaction(async (tx) => {
        const [row] = await tx.query<{ kind: string; username: string; expires_at_ms: number; family: string | null }>(
          "SELECT kind, username, expires_at_ms, family FROM auth_tokens WHERE token_hash = $1 AND issuer = $2 AND kind IN ('refresh', 'rotated')",
          [hash, issuer],
        );
        if (!row || Number(row.expires_at_ms) <= clock.nowMs()) return undefined;
        // A row from before families existed starts its own, named by its digest (not a credential).
        const family = row.family ?? hash;
        if (row.kind === 'rotated') {
          await tx.execute('DELETE FROM auth_tokens WHERE issuer = $1 AND family = $2', [issuer, family]);
          return undefined;
        }
        await tx.execute("UPDATE auth_tokens SET kind = 'rotated', family = $3 WHERE token_hash = $1 AND issuer = $2", [
          hash,
          issuer,
          family,
        ]);
        return grant(tx, row.username, address, family);
      });
    },
  };
}
