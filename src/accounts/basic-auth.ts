import { ADMIN_PROFILE } from './admin-bootstrap.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { AccountStore } from './account-store.ts';
import type { LoginBackoffOptions, LoginOutcome } from './login-backoff.ts';

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
export const basicAuthorization = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

/** Checks a basic Authorization header; `from` (the client's address) keys the failure backoff. */
export type BasicAuthenticator = (authorization: string | string[] | undefined, from?: string) => Promise<boolean>;

export type BasicAuthenticatorOptions = {
  /** Times the cache (default: the system clock). */
  clock?: Clock;
  /** How long a successful check is remembered (default 60 s); 0 turns the cache off. */
  cacheTtlMs?: number;
  /** Most remembered checks; the cache starts over past it (default 1000). */
  cacheMaxEntries?: number;
  /** Slows down repeated failed logins per user name (defaults in login-backoff.ts: 5 free, then 1 s doubling to 60 s). */
  backoff?: LoginBackoffOptions;
};

/**
 * Checks basic-authentication headers against one access profile (default `admin`).
 *
 * scrypt makes each check cost ~55 ms, too much for every request of a management client, so
 * successful checks are remembered for `cacheTtlMs`. The cache is keyed by an HMAC of the header
 * under a key made at start, so no password or header value sits in memory beyond the request; it
 * is dropped whenever a password changes or a user is removed through the store. A change made by
 * another process (the `users` CLI) takes effect within the TTL. Failures are never cached.
 * Repeated failures for one user name are slowed down (login-backoff.ts, in the store: every process
 * counts together): past the free ones, that name's attempts answer `false` unchecked, the same answer
 * as a wrong password or an unknown user.
 */
export function createBasicAuthenticator(
  accounts: AccountStore,
  profile = ADMIN_PROFILE,
  options: BasicAuthenticatorOptions = {},
): BasicAuthenticator {
  const clock = options.clock ?? systemClock;
  const ttl = options.cacheTtlMs ?? 60_000;
  const maxEntries = options.cacheMaxEntries ?? 1000;
  // In the store: every process sharing it counts one name's failures together.
  const backoff = accounts.loginBackoff(`${profile}:name`, options.backoff);
  // One client address trying many user names gets a budget across them all (four times a name's):
  // otherwise each new name buys free password checks, ~55 ms of scrypt each, and a flood of them
  // stalls every other client's login.
  const perName = options.backoff?.failuresBeforeBackoff ?? 5;
  const addressBackoff = accounts.loginBackoff(`${profile}:address`, { ...options.backoff, failuresBeforeBackoff: perName * 4 });
  const key = randomBytes(32);
  const remembered = new Map<string, number>();
  // Identical headers arriving together share one check: a client's parallel first requests cost one
  // hash, and use up one of the backoff's checks, not one each.
  const checking = new Map<string, Promise<boolean>>();
  let seenChanges = accounts.changes();

  const check = async (
    cacheKey: string,
    { username, password }: BasicCredentials,
    backoffKey: string,
    from: string | undefined,
  ): Promise<boolean> => {
    const finish = async (outcome: LoginOutcome) => {
      await backoff.finish(backoffKey, outcome);
      if (from !== undefined) await addressBackoff.finish(from, outcome);
    };
    const now = clock.nowMs();
    const until = remembered.get(cacheKey);
    if (until !== undefined && until > now) {
      await finish('success');
      return true;
    }
    const changesBefore = accounts.changes();
    let verdict;
    try {
      verdict = await accounts.verify(profile, username, password);
    } catch (error) {
      await finish('no-answer').catch(() => undefined); // the store failed: not a wrong password
      throw error;
    }
    const allowed = verdict === 'allow';
    await finish(allowed ? 'success' : 'failure');
    // A password changed while this check ran: its answer may be stale, so it is not remembered.
    if (allowed && ttl > 0 && accounts.changes() === changesBefore) {
      if (remembered.size >= maxEntries) remembered.clear();
      remembered.set(cacheKey, now + ttl);
    }
    return allowed;
  };

  // The backoff comes before the cache: otherwise a blocked name could still test guesses against
  // the remembered header of a real user, at no cost. Its refusal is the same `false` as a wrong password.
  // Failures count per user name and client address: guesses from one address slow that address
  // down, not the account's owner (nor the gateway's own calls to the device) elsewhere.
  // A remembered credential whose name and address have no failure on record is allowed on two reads: there is
  // nothing to count or reset (a guess cannot be remembered; only a checked, right password is).
  const attempt = async (cacheKey: string, credentials: BasicCredentials, from: string | undefined): Promise<boolean> => {
    const backoffKey = `${credentials.username}\u0000${from ?? ''}`;
    const until = remembered.get(cacheKey);
    if (
      until !== undefined &&
      until > clock.nowMs() &&
      (await backoff.isClear(backoffKey)) &&
      (from === undefined || (await addressBackoff.isClear(from)))
    )
      return true;
    if (!(await backoff.tryStart(backoffKey))) return false;
    if (from !== undefined && !(await addressBackoff.tryStart(from))) {
      await backoff.finish(backoffKey, 'no-answer');
      return false;
    }
    return check(cacheKey, credentials, backoffKey, from);
  };

  return async (authorization, from) => {
    if (accounts.changes() !== seenChanges) {
      seenChanges = accounts.changes();
      remembered.clear();
      checking.clear(); // a check under way may have read the old password: later requests do not join it
    }
    const credentials = parseBasicAuth(authorization);
    if (!credentials) return false;
    const cacheKey = createHmac('sha256', key)
      .update(authorization as string)
      .digest('base64');
    const joined = checking.get(cacheKey);
    if (joined) return joined;
    // Joined before the backoff is asked (the store answers later): parallel identical headers count once.
    const pending = attempt(cacheKey, credentials, from).finally(() => {
      if (checking.get(cacheKey) === pending) checking.delete(cacheKey);
    });
    checking.set(cacheKey, pending);
    return pending;
  };
}
