import { ADMIN_PROFILE } from './admin-bootstrap.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { AccountStore } from './account-store.ts';

export type BasicCredentials = { username: string; password: string };

/**
 * Reads an `Authorization: Basic <base64(user:password)>` header; undefined when it is absent or not
 * basic authentication. The password may contain colons; the username may not.
 *
 * @example
 * parseBasicAuth('Basic YWRtaW46czNjcjN0') // { username: 'admin', password: 's3cr3t' }
 */
export function parseBasicAuth(header: string | readonly string[] | undefined): BasicCredentials | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `Basic <base64(user:password)>`, the header value for outgoing calls. */
export const basicAuthorization = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

export type BasicAuthenticator = (authorization: string | string[] | undefined) => Promise<boolean>;

export type BasicAuthenticatorOptions = {
  /** Times the cache (default: the system clock). */
  clock?: Clock;
  /** How long a successful check is remembered (default 60 s); 0 turns the cache off. */
  cacheTtlMs?: number;
  /** Most remembered checks; the cache starts over past it (default 1000). */
  cacheMaxEntries?: number;
};

/**
 * Checks basic-authentication headers against one access profile (default `admin`).
 *
 * scrypt makes each check cost ~55 ms, too much for every request of a management client, so
 * successful checks are remembered for `cacheTtlMs`. The cache is keyed by an HMAC of the header
 * under a key made at start, so no password or header value sits in memory beyond the request; it
 * is dropped whenever a password changes or a user is removed through the store. A change made by
 * another process (the `users` CLI) takes effect within the TTL. Failures are never cached.
 */
export function createBasicAuthenticator(accounts: AccountStore, profile = ADMIN_PROFILE, options: BasicAuthenticatorOptions = {}): BasicAuthenticator {
  const clock = options.clock ?? systemClock;
  const ttl = options.cacheTtlMs ?? 60_000;
  const maxEntries = options.cacheMaxEntries ?? 1000;
  const key = randomBytes(32);
  const remembered = new Map<string, number>();
  let seenChanges = accounts.changes();

  return async (authorization) => {
    if (accounts.changes() !== seenChanges) {
      seenChanges = accounts.changes();
      remembered.clear();
    }
    const credentials = parseBasicAuth(authorization);
    if (!credentials) return false;
    const now = clock.nowMs();
    const cacheKey = createHmac('sha256', key).update(authorization as string).digest('base64');
    const until = remembered.get(cacheKey);
    if (until !== undefined && until > now) return true;
    const changesBefore = accounts.changes();
    const allowed = (await accounts.verify(profile, credentials.username, credentials.password)) === 'allow';
    // A password changed while this check ran: its answer may be stale, so it is not remembered.
    if (allowed && ttl > 0 && accounts.changes() === changesBefore) {
      if (remembered.size >= maxEntries) remembered.clear();
      remembered.set(cacheKey, now + ttl);
    }
    return allowed;
  };
}
