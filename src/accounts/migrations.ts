import type { Migration } from '../stores/database.ts';

/** Accounts: users per access profile, passwords stored hashed; login tokens as digests (versions 200-299). */
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
];
