import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../stores/database.ts';

export type LoginBackoffOptions = {
  /** Failed logins in a row per user name that are checked freely (default 5); 0 turns the backoff off. */
  failuresBeforeBackoff?: number;
  /** The wait after the last free failure (default 1 s); each further failure doubles it. */
  firstDelayMs?: number;
  /** The longest wait (default 60 s): it bounds how long an attacker can keep the real user out. */
  maxDelayMs?: number;
  /** Most user names remembered, every scope together; the least recently tried are forgotten past it (default 10 000). */
  maxTrackedNames?: number;
};

/** How a started check ended: `no-answer` (the store failed) neither counts nor resets. */
export type LoginOutcome = 'success' | 'failure' | 'no-answer';

export type LoginBackoff = {
  /** Whether a password check for `username` may run now; when true, report its end with `finish`. */
  tryStart(username: string): Promise<boolean>;
  finish(username: string, outcome: LoginOutcome): Promise<void>;
  /**
   * Whether `username` has no failure on record and no wait to serve: a credential already proven needs
   * neither a check nor a reset then (one read, no write). False means: go through `tryStart`.
   */
  isClear(username: string): Promise<boolean>;
  /** User names currently remembered, every scope together (bounded by about maxTrackedNames). */
  trackedNames(): Promise<number>;
};

export type StoredLoginBackoffOptions = LoginBackoffOptions & {
  clock: Clock;
  /** Whose failures these are (`admin:name`, `admin:address`): two scopes never share a count. */
  scope: string;
  /** How long a batch of checks under way counts before it is taken for abandoned (its process died), default 10 s. */
  checkLeaseMs?: number;
};

/** The stored secret the names are hashed with (account_secrets): the same in every process on the store. */
const SECRET_NAME = 'login-backoff';
/** Every this many names newly tracked by a process, it forgets the least recently tried past the bound. */
const CLEANUP_EVERY = 16;
/** Most rows one clean-up removes (more than CLEANUP_EVERY: it keeps up). */
const CLEANUP_BATCH = 64;

// The check's decision and its bookkeeping in one statement, so processes sharing the store cannot both
// take the last free check: a row is locked (PostgreSQL) or the file is (SQLite) while it runs.
// $1 name, $2 the lease's end, $3 now, $4 free failures. A check under way past its lease counts as none. The
// lease is the first check's of a batch under way, never extended by a later one: checks left by processes that
// died stop counting at the latest one lease after the batch began, however many checks follow.
const UNDER_WAY = 'CASE WHEN login_backoff.checking_until_ms <= $3 THEN 0 ELSE login_backoff.checking END';
const MAY_CHECK = `login_backoff.blocked_until_ms <= $3 AND NOT (${UNDER_WAY} > 0 AND login_backoff.failures + ${UNDER_WAY} >= $4)`;
const TRY_START = `INSERT INTO login_backoff (name_hash, failures, checking, checking_until_ms, blocked_until_ms, last_try_ms, tries, allowed)
VALUES ($1, 0, 1, $2, 0, $3, 1, 1)
ON CONFLICT (name_hash) DO UPDATE SET
  allowed = CASE WHEN ${MAY_CHECK} THEN 1 ELSE 0 END,
  checking = CASE WHEN ${MAY_CHECK} THEN ${UNDER_WAY} + 1 ELSE login_backoff.checking END,
  checking_until_ms = CASE WHEN ${MAY_CHECK} AND ${UNDER_WAY} = 0 THEN excluded.checking_until_ms ELSE login_backoff.checking_until_ms END,
  last_try_ms = excluded.last_try_ms,
  tries = login_backoff.tries + 1
RETURNING allowed, tries`;
const ONE_LESS_UNDER_WAY = 'checking = CASE WHEN checking > 0 THEN checking - 1 ELSE 0 END';
// $1 name, $2 now, $3 free failures, $4 the doubling count at which the wait reaches its cap, $5 first wait, $6 longest wait.
const FAILED = `UPDATE login_backoff SET
  failures = failures + 1,
  ${ONE_LESS_UNDER_WAY},
  blocked_until_ms = CASE
    WHEN failures + 1 < $3 THEN blocked_until_ms
    WHEN failures + 1 - $3 >= $4 THEN CAST($2 AS BIGINT) + CAST($6 AS BIGINT)
    ELSE CAST($2 AS BIGINT) + CAST($5 AS BIGINT) * (CAST(1 AS BIGINT) << (failures + 1 - $3))
  END
WHERE name_hash = $1`;
const FORGET_OLDEST = `DELETE FROM login_backoff WHERE name_hash IN (
  SELECT name_hash FROM login_backoff ORDER BY last_try_ms DESC LIMIT ${CLEANUP_BATCH} OFFSET $1)`;

/**
 * Slows down password guessing per user name, in the store every process shares (`login_backoff`), so
 * N processes give an attacker no more checks than one. Past `failuresBeforeBackoff` failures in a row,
 * attempts are refused unchecked until a wait (doubling per further failure, capped) has passed, then
 * checked one at a time; a success resets the name. Names are tracked whether or not the user exists, so
 * an unknown user is answered exactly like a wrong password. Checks under way count towards the free
 * failures, so a burst of parallel guesses, from any number of processes, gets no more checks than a
 * sequence would. Names are stored only as HMACs under a secret kept in the store (one for every process),
 * a fixed 44 characters whatever a client sends; the least recently tried are forgotten past
 * `maxTrackedNames`. A store that fails makes `tryStart` throw (the password check would fail too).
 *
 * @example
 * const backoff = createLoginBackoff(db, { clock, scope: 'admin:name' });
 * if (await backoff.tryStart(name)) await backoff.finish(name, (await verify(name, password)) ? 'success' : 'failure');
 */
export function createLoginBackoff(db: Database, options: StoredLoginBackoffOptions): LoginBackoff {
  const { clock, scope } = options;
  const free = options.failuresBeforeBackoff ?? 5;
  const firstDelay = Math.max(1, options.firstDelayMs ?? 1_000);
  const maxDelay = Math.max(firstDelay, options.maxDelayMs ?? 60_000);
  const maxNames = options.maxTrackedNames ?? 10_000;
  const leaseMs = options.checkLeaseMs ?? 10_000;
  // The doublings after which the wait is at its cap (first * 2^k >= max): the store shifts no further.
  const capAt = Math.ceil(Math.log2(maxDelay / firstDelay));
  let key: Promise<Buffer> | undefined;
  const keyOf = () => {
    key ??= sharedSecret(db).catch((error: unknown) => {
      key = undefined; // asked again next time: the store may be back
      throw error;
    });
    return key;
  };
  const id = async (username: string) =>
    createHmac('sha256', await keyOf())
      .update(scope)
      .update('\u0000')
      .update(username)
      .digest('base64');
  let newNames = 0;

  return {
    async tryStart(username) {
      if (free === 0) return true;
      const nameId = await id(username);
      const now = clock.nowMs();
      const [row] = await db.query<{ allowed: number | string; tries: number | string }>(TRY_START, [nameId, now + leaseMs, now, free]);
      // A name newly tracked: now and then, the least recently tried past the bound are forgotten.
      if (Number(row?.tries) === 1 && ++newNames % CLEANUP_EVERY === 0) await db.execute(FORGET_OLDEST, [maxNames]);
      return Number(row?.allowed) === 1;
    },
    async finish(username, outcome) {
      if (free === 0) return;
      const nameId = await id(username);
      const now = clock.nowMs();
      if (outcome === 'failure') {
        await db.execute(FAILED, [nameId, now, free, capAt, firstDelay, maxDelay]);
      } else if (outcome === 'success') {
        // The last check under way: the name is forgotten; else the others' checks still count.
        const { rowCount } = await db.execute(
          'DELETE FROM login_backoff WHERE name_hash = $1 AND (checking <= 1 OR checking_until_ms <= $2)',
          [nameId, now],
        );
        if (rowCount === 0)
          await db.execute(`UPDATE login_backoff SET ${ONE_LESS_UNDER_WAY}, failures = 0, blocked_until_ms = 0 WHERE name_hash = $1`, [
            nameId,
          ]);
      } else {
        await db.execute(`UPDATE login_backoff SET ${ONE_LESS_UNDER_WAY} WHERE name_hash = $1`, [nameId]);
      }
    },
    async isClear(username) {
      if (free === 0) return true;
      const [row] = await db.query<{ failures: number | string; blocked_until_ms: number | string }>(
        'SELECT failures, blocked_until_ms FROM login_backoff WHERE name_hash = $1',
        [await id(username)],
      );
      return row === undefined || (Number(row.failures) === 0 && Number(row.blocked_until_ms) <= clock.nowMs());
    },
    trackedNames: async () => Number((await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM login_backoff'))[0]?.n ?? 0),
  };
}

/** The secret every process hashes names with: made once by whichever process asks first, then read. */
async function sharedSecret(db: Database): Promise<Buffer> {
  await db.execute('INSERT INTO account_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    SECRET_NAME,
    randomBytes(32).toString('base64'),
  ]);
  const [row] = await db.query<{ value: string }>('SELECT value FROM account_secrets WHERE name = $1', [SECRET_NAME]);
  if (!row) throw new Error('the login backoff secret was not stored');
  return Buffer.from(row.value, 'base64');
}
