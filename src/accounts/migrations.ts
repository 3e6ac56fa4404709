import type { Migration } from '../stores/database.ts';

/** Accounts: users per access profile, passwords stored hashed (versions 200-299). */
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
];
