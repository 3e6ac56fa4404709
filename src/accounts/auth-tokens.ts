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
  /** A new access token for a valid refresh token; undefined when it is unknown or expired. */
  exchange(refreshToken: string, address: string): Promise<{ username: string; address: string; access: IssuedToken } | undefined>;
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
 */
export function createTokenService(db: Database, options: TokenServiceOptions): TokenService {
  const { clock, issuer } = options;
  const refreshTimeout = options.refreshTimeoutSeconds ?? 36_000;

  const insert = async (kind: 'access' | 'refresh', username: string, address: string, timeoutSeconds: number): Promise<IssuedToken> => {
    const token = newToken();
    const startMs = clock.nowMs();
    const expiresMs = startMs + timeoutSeconds * 1000;
    await db.execute(
      'INSERT INTO auth_tokens (token_hash, issuer, kind, username, address, issued_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [digest(token), issuer, kind, username, address, startMs, expiresMs],
    );
    return { token, startMs, expiresMs, timeoutSeconds };
  };

  const find = async (kind: 'access' | 'refresh', token: string) => {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
    const rows = await db.query<{ username: string; address: string; expires_at_ms: number }>(
      'SELECT username, address, expires_at_ms FROM auth_tokens WHERE token_hash = $1 AND issuer = $2 AND kind = $3',
      [digest(token), issuer, kind],
    );
    const row = rows[0];
    if (!row || Number(row.expires_at_ms) <= clock.nowMs()) return undefined;
    return row;
  };

  return {
    async issue(username, address) {
      await db.execute('DELETE FROM auth_tokens WHERE issuer = $1 AND expires_at_ms <= $2', [issuer, clock.nowMs()]);
      const access = await insert('access', username, address, options.accessTimeoutSeconds);
      const refresh = await insert('refresh', username, address, refreshTimeout);
      return { username, address, access, refresh };
    },
    async verify(token) {
      const row = await find('access', token);
      return row ? { username: row.username } : undefined;
    },
    async exchange(refreshToken, address) {
      const row = await find('refresh', refreshToken);
      if (!row) return undefined;
      return { username: row.username, address, access: await insert('access', row.username, address, options.accessTimeoutSeconds) };
    },
  };
}
