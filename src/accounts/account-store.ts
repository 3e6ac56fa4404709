import { randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../stores/database.ts';
import { isDatabaseError } from '../stores/database-error.ts';
import { hashPassword, verifyPassword } from './password-hash.ts';
import { createLoginBackoff, type LoginBackoff, type LoginBackoffOptions } from './login-backoff.ts';

/**
 * The result of evaluating an access profile with a username and password, in the real product's
 * terms: `not_started` when the profile has no users at all (it was never set up).
 */
export type AccessVerdict = 'allow' | 'deny' | 'not_started';

export type Account = { profile: string; username: string; createdAt: string; updatedAt: string };

export interface AccountStore {
  /** Creates the user only if it does not exist yet (two processes racing: one wins, the other gets `exists`). */
  add(profile: string, username: string, password: string): Promise<'created' | 'exists'>;
  /** Creates the user or replaces its password (stored hashed). */
  setPassword(profile: string, username: string, password: string): Promise<'created' | 'updated'>;
  /** Whether a user was removed. */
  remove(profile: string, username: string): Promise<boolean>;
  has(profile: string, username: string): Promise<boolean>;
  /** Users of one profile, or of every profile; ordered by profile, then username. Never hashes. */
  list(profile?: string): Promise<Account[]>;
  /** `deny` for an unknown user or a wrong password; an unknown user costs a hash too (no timing oracle). */
  verify(profile: string, username: string, password: string): Promise<AccessVerdict>;
  /** Counts the changes made through this store, so caches of successful checks know when to drop. */
  changes(): number;
  /**
   * The login backoff of one scope (`<profile>:name`, `<profile>:address`), kept in this store: every
   * process on it counts the same failures (login-backoff.ts).
   */
  loginBackoff(scope: string, options?: LoginBackoffOptions): LoginBackoff;
}

export type AccountStoreOptions = {
  clock: Clock;
  /** Compares a password with a stored hash (default: scrypt's, password-hash.ts); tests count the calls. */
  verifyPassword?: (password: string, encoded: string) => Promise<boolean>;
};

/** Names are data on the wire (basic auth, form fields): bounded, printable, no colon in a username. */
export function accountNameProblem(kind: 'profile' | 'username', value: string): string | undefined {
  const max = kind === 'profile' ? 255 : 256;
  if (value.length === 0 || value.length > max) return `${kind} must be 1 to ${max} characters`;
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${kind} must not contain control characters`;
  if (kind === 'username' && value.includes(':'))
    return 'username must not contain a colon (basic authentication separates user and password with it)';
  return undefined;
}

export function passwordProblem(password: string): string | undefined {
  if (password.length === 0 || password.length > 1024) return 'password must be 1 to 1024 characters';
  return undefined;
}

function check(problem: string | undefined) {
  if (problem) throw new TypeError(problem);
}

/**
 * Users per access profile on the SQL port, passwords hashed with scrypt.
 *
 * @example
 * const accounts = createAccountStore(db, { clock });
 * await accounts.setPassword('registration_check', 'alice@example.com', 'c0rrect horse');
 * await accounts.verify('registration_check', 'alice@example.com', 'c0rrect horse'); // 'allow'
 */
export function createAccountStore(db: Database, options: AccountStoreOptions): AccountStore {
  let changes = 0;
  // Compared against when the user is unknown, so that answer takes as long as a wrong password.
  let decoy: Promise<string> | undefined;
  const verify = options.verifyPassword ?? verifyPassword;
  const burnOneHash = async (password: string) => {
    await verify(password, await (decoy ??= hashPassword(randomBytes(16).toString('hex'))));
  };

  const prepare = async (profile: string, username: string, password: string) => {
    check(accountNameProblem('profile', profile));
    check(accountNameProblem('username', username));
    check(passwordProblem(password));
    return { hash: await hashPassword(password), now: options.clock.now().toISOString() };
  };

  return {
    async add(profile, username, password) {
      const { hash, now } = await prepare(profile, username, password);
      try {
        await db.execute(
          'INSERT INTO account_users (profile, username, password_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)',
          [profile, username, hash, now],
        );
      } catch (error) {
        if (isDatabaseError(error, 'unique-violation')) return 'exists';
        throw error;
      }
      changes++;
      return 'created';
    },
    async setPassword(profile, username, password) {
      const { hash, now } = await prepare(profile, username, password);
      const existed = await db.transaction(async (tx) => {
        const updated = await tx.execute(
          'UPDATE account_users SET password_hash = $1, updated_at = $2 WHERE profile = $3 AND username = $4',
          [hash, now, profile, username],
        );
        if (updated.rowCount > 0) return true;
        await tx.execute(
          'INSERT INTO account_users (profile, username, password_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)',
          [profile, username, hash, now],
        );
        return false;
      });
      changes++;
      return existed ? 'updated' : 'created';
    },
    async remove(profile, username) {
      const { rowCount } = await db.execute('DELETE FROM account_users WHERE profile = $1 AND username = $2', [profile, username]);
      if (rowCount > 0) changes++;
      return rowCount > 0;
    },
    async has(profile, username) {
      return (await db.query('SELECT 1 AS found FROM account_users WHERE profile = $1 AND username = $2', [profile, username])).length > 0;
    },
    async list(profile) {
      const columns = 'SELECT profile, username, created_at, updated_at FROM account_users';
      const rows =
        profile === undefined
          ? await db.query(`${columns} ORDER BY profile, username`)
          : await db.query(`${columns} WHERE profile = $1 ORDER BY username`, [profile]);
      return rows.map((r) => ({
        profile: String(r.profile),
        username: String(r.username),
        createdAt: String(r.created_at),
        updatedAt: String(r.updated_at),
      }));
    },
    async verify(profile, username, password) {
      const [row] = await db.query<{ password_hash: string }>(
        'SELECT password_hash FROM account_users WHERE profile = $1 AND username = $2',
        [profile, username],
      );
      if (row) return (await verify(password, row.password_hash)) ? 'allow' : 'deny';
      await burnOneHash(password);
      const started = await db.query('SELECT 1 AS found FROM account_users WHERE profile = $1 LIMIT 1', [profile]);
      return started.length > 0 ? 'deny' : 'not_started';
    },
    changes: () => changes,
    loginBackoff: (scope, backoff = {}) => createLoginBackoff(db, { ...backoff, clock: options.clock, scope }),
  };
}
