import type { Migration } from '../stores/database.ts';

/** Accounts: users per access profile, passwords stored hashed; login tokens as digests; the login backoff (versions 200-299). */
export const ACCOUNT_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: 'account users per access profile',
    up: `CREATE TABLE account_users (
  profile TEXT NOT NULL,
  username TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (profile, username)
);`,
  },
  {
    version: 201,
    name: 'authentication tokens of the token logins (digests only)',
    up: `CREATE TABLE auth_tokens (
  token_hash TEXT PRIMARY KEY,
  issuer TEXT NOT NULL,
  kind TEXT NOT NULL,
  username TEXT NOT NULL,
  address TEXT NOT NULL,
  issued_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
CREATE INDEX auth_tokens_expiry ON auth_tokens (issuer, expires_at_ms);`,
  },
  {
    version: 202,
    // A login's tokens form one family: a rotated refresh token used again revokes the whole family
    // (auth-tokens.ts). Rows from before have no family and are rotated into their own.
    name: 'token families for refresh token rotation',
    up: `ALTER TABLE auth_tokens ADD COLUMN family TEXT;
CREATE INDEX auth_tokens_family ON auth_tokens (issuer, family);`,
  },
  {
    version: 203,
    // Login backoff in the store, so every process counts one user name's failures together
    // (login-backoff.ts); names only as HMACs under a secret of the store (account_secrets).
    name: 'login backoff shared by every process',
    up: `CREATE TABLE login_backoff (
  name_hash TEXT PRIMARY KEY,
  failures INTEGER NOT NULL,
  checking INTEGER NOT NULL,
  checking_until_ms BIGINT NOT NULL,
  blocked_until_ms BIGINT NOT NULL,
  last_try_ms BIGINT NOT NULL,
  tries BIGINT NOT NULL,
  allowed INTEGER NOT NULL
);
CREATE INDEX login_backoff_recency ON login_backoff (last_try_ms);
CREATE TABLE account_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);`,
  },
];
