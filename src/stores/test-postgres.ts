// Test helper: a throwaway PostgreSQL database per test, or a visible skip when no server answers.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TapTest } from '../lib/tap-test.ts';
import { redactCredentials } from './database-url.ts';

/** Overrides the server the PostgreSQL tests use (an administrative URL: it must be allowed to CREATE DATABASE). */
export const TEST_POSTGRES_ENV = 'PORTOLAN_TEST_POSTGRES_URL';
// Trust auth on the development machines: the `postgres` role where it exists, else the login user `root`.
const DEFAULT_SERVERS = ['postgres://postgres@127.0.0.1:5432/postgres', 'postgres://root@127.0.0.1:5432/postgres'];
const PROBE_TIMEOUT_MS = 2_000;
const DATABASE_PREFIX = 'portolan_test_';
// Databases left behind by a run that was killed before its teardown are dropped once they are this old.
const STALE_AFTER_MS = 60 * 60 * 1000;

type Server = { adminUrl: string } | { reason: string };
let server: Promise<Server> | undefined;

/**
 * Creates a fresh database `portolan_test_<time>_<random>` on the test server, dropped when `t` ends,
 * and returns its URL. When no server answers, records a visible SKIP on `t` with the reason and
 * returns undefined: the caller then returns without asserting anything.
 *
 * @example
 * t.test('charts survive a restart on PostgreSQL', async (t) => {
 *   const url = await withTestPostgres(t);
 *   if (url) await createAndRestart(t, url);
 * });
 */
export async function withTestPostgres(t: TapTest): Promise<string | undefined> {
  const found = await (server ??= findServer());
  if ('reason' in found) {
    t.skip(`PostgreSQL suites skipped: no server answers at ${serverLabel()} (${found.reason})`, () => undefined);
    return undefined;
  }
  const name = `${DATABASE_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
  await onAdmin(found.adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  t.teardown(() => onAdmin(found.adminUrl, (client) => dropDatabase(client, name)));
  const url = new URL(found.adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * A fresh schema in the database `databaseUrl` names (one from withTestPostgres), dropped when `t` ends,
 * and a URL whose connections work in it (their search_path). For suites that need many empty
 * databases: a schema takes a few milliseconds, a database ~50.
 *
 * @example
 * const url = await withTestPostgres(t);
 * if (url) for (const name of cases) t.test(name, async (t) => use(await withTestSchema(t, url)));
 */
export async function withTestSchema(t: TapTest, databaseUrl: string): Promise<string> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await onAdmin(databaseUrl, (client) => client.query(`CREATE SCHEMA ${schema}`));
  t.teardown(() => onAdmin(databaseUrl, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.href;
}

/** Where the tests look for a server: host and port only. */
const serverLabel = (): string => {
  const url = URL.parse(process.env[TEST_POSTGRES_ENV] || DEFAULT_SERVERS[0]!);
  return url ? `${url.hostname}:${url.port || 5432}` : `the ${TEST_POSTGRES_ENV} setting (not a valid URL)`;
};

/** The first candidate server that answers and may create databases; drops stale test databases on it. */
async function findServer(): Promise<Server> {
  const override = process.env[TEST_POSTGRES_ENV];
  const candidates = override ? [override] : DEFAULT_SERVERS;
  const as = (adminUrl: string) => `as ${URL.parse(adminUrl)?.username || 'the default user'}`;
  const reasons: string[] = [];
  for (const adminUrl of candidates) {
    try {
      const canCreate = await onAdmin(adminUrl, async (client) => {
        const { rows } = await client.query<{ can: boolean }>(
          'SELECT rolcreatedb OR rolsuper AS can FROM pg_roles WHERE rolname = current_user',
        );
        if (rows[0]?.can) await dropStaleDatabases(client);
        return rows[0]?.can === true;
      });
      if (canCreate) return { adminUrl };
      reasons.push(`${as(adminUrl)}: this role may not create databases`);
    } catch (error) {
      reasons.push(`${as(adminUrl)}: ${redactCredentials(error instanceof Error ? error.message : String(error))}`);
    }
  }
  return { reason: reasons.join('; ') };
}

async function onAdmin<T>(adminUrl: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: 10_000 });
  client.on('error', () => undefined); // a lost admin connection fails the pending query; nothing else to do
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  // FORCE (PostgreSQL 13+) ends connections a test left open rather than fail the drop.
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function dropStaleDatabases(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE '${DATABASE_PREFIX}%'`);
  for (const { datname } of rows) {
    const createdAt = Number(/^portolan_test_(\d+)_/.exec(datname)?.[1]);
    if (createdAt > 0 && Date.now() - createdAt > STALE_AFTER_MS) await dropDatabase(client, datname).catch(() => undefined);
  }
}
