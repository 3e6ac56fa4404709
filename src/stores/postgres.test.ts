import t from 'tap';
import type { TapTest } from '../lib/tap-test.ts';
import type { DatabaseLogger } from './database.ts';
import { runDatabaseContract } from './database-contract.ts';
import { isDatabaseError } from './database-error.ts';
import { applyMigrations } from './migrations.ts';
import { openPostgresDatabase, type PostgresOptions } from './postgres.ts';
import { withTestPostgres, withTestSchema } from './test-postgres.ts';
import { startTcpProxy, type TcpProxy } from './test-tcp-proxy.ts';

// Short timeouts: the outage tests wait for them. The password is never asked for (trust auth) but is in
// the setting, so every message below can be checked for it.
const PASSWORD = 's3cret-Pa55word';
const CONNECT_TIMEOUT_MS = 400;
const PING_TIMEOUT_MS = 250;

/** A logger that keeps what it is given, to check it for the password. */
function recordingLogger(): DatabaseLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (fields: Record<string, unknown>, message: string) => void lines.push(`${message} ${JSON.stringify(fields)}`);
  return { lines, info: record, warn: record };
}

/** A fresh schema of the test database, reached through a proxy on an ephemeral port, with a password in the setting. */
async function throughProxy(t: TapTest, databaseUrl: string, options: Partial<PostgresOptions> = {}) {
  const url = await withTestSchema(t, databaseUrl);
  const server = new URL(url);
  const proxy: TcpProxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  t.teardown(() => proxy.close());
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  proxied.password = PASSWORD;
  const logger = recordingLogger();
  const db = openPostgresDatabase({
    connectionString: proxied.href,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    queryTimeoutMs: 2_000,
    logger,
    ...options,
  });
  t.teardown(async () => {
    await proxy.resume();
    await db.close();
  });
  return { db, proxy, logger };
}

// wall-clock: only a lower bound is asserted on it (a timer never fires early), never an upper one.
async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now(); // wall-clock: see above
  const value = await work;
  return { value, ms: performance.now() - started }; // wall-clock: see above
}

t.test('PostgreSQL', async (t) => {
  // One database for the file: when no server answers, this records the one visible SKIP and nothing else runs.
  const url = await withTestPostgres(t);
  if (!url) return;

  // Each contract subtest gets a schema of its own in that database, so they can also run side by side.
  t.test('the PostgreSQL engine keeps the database contract', { jobs: 4 }, async (t) => {
    runDatabaseContract(t, {
      fresh: async (t) => {
        const fresh = await withTestSchema(t, url);
        return { url: fresh, open: async () => openPostgresDatabase({ connectionString: fresh }) };
      },
    });
  });

  for (const mode of ['hold', 'refuse'] as const) {
    const outage = mode === 'hold' ? 'hangs (accepts, never answers)' : 'is stopped (refuses connections)';
    t.test(
      `while the server ${outage}: ping fails in time, queries fail clearly, the process lives; then it recovers by itself`,
      async (t) => {
        const { db, proxy, logger } = await throughProxy(t, url);
        await applyMigrations(db, [
          { version: 1, name: 'notes', up: "CREATE TABLE notes (id TEXT PRIMARY KEY); INSERT INTO notes VALUES ('a');" },
        ]);
        t.same(await db.ping(PING_TIMEOUT_MS), { ok: true });
        const said: string[] = [];

        await proxy.pause(mode);
        // The first ping may meet a pooled connection just cut (it fails at once); the second needs a new one.
        for (const attempt of ['first', 'second']) {
          const ping = await timed(db.ping(PING_TIMEOUT_MS));
          t.equal(ping.value.ok, false, `the ${attempt} ping reports the outage`);
          t.match(ping.value, { reason: /PostgreSQL/ });
          said.push(ping.value.ok ? '' : ping.value.reason);
          if (attempt === 'second' && mode === 'hold') {
            t.ok(ping.ms >= PING_TIMEOUT_MS - 25, 'it waited on the hung server until its timeout');
            t.match(ping.value, { reason: `did not answer within ${PING_TIMEOUT_MS} ms` });
          }
        }

        const [failed, failedTransaction] = await Promise.all([
          timed(db.query('SELECT id FROM notes').catch((e: unknown) => e)),
          timed(db.transaction((tx) => tx.query('SELECT 1 AS one')).catch((e: unknown) => e)),
        ]);
        t.ok(isDatabaseError(failed.value, 'unavailable'), 'a query fails as unavailable');
        t.match((failed.value as Error).message, /^PostgreSQL is unavailable: /);
        t.ok(isDatabaseError(failedTransaction.value, 'unavailable'), 'a transaction fails the same way');

        await proxy.resume();
        t.same(await db.ping(2_000), { ok: true }, 'ping is ok again, without a restart');
        t.same(await db.query('SELECT id FROM notes'), [{ id: 'a' }], 'queries work again, data intact');

        said.push((failed.value as Error).message, (failedTransaction.value as Error).message, ...logger.lines);
        t.notMatch(said.join('\n'), PASSWORD, 'no message or log line holds the password');
      },
    );
  }

  t.test('a connection lost in the middle of a transaction fails that transaction, not the process or the next one', async (t) => {
    const { db, proxy } = await throughProxy(t, url);
    await applyMigrations(db, [{ version: 1, name: 'notes', up: 'CREATE TABLE notes (id TEXT PRIMARY KEY)' }]);
    const error = await db
      .transaction(async (tx) => {
        await tx.execute("INSERT INTO notes VALUES ('lost')");
        await proxy.pause('refuse');
        await tx.execute("INSERT INTO notes VALUES ('never')");
      })
      .catch((e: unknown) => e);
    t.ok(isDatabaseError(error, 'unavailable'), 'the transaction fails as unavailable');
    await proxy.resume();
    await db.transaction((tx) => tx.execute("INSERT INTO notes VALUES ('next')"));
    t.same(await db.query('SELECT id FROM notes'), [{ id: 'next' }], 'the lost transaction left nothing behind');
  });

  t.test('a statement running past the query timeout is cancelled, not waited for', async (t) => {
    const db = openPostgresDatabase({ connectionString: url, queryTimeoutMs: 200 });
    t.teardown(() => db.close());
    const slow = await timed(db.query('SELECT pg_sleep(5)').catch((e: unknown) => e));
    t.ok(isDatabaseError(slow.value, 'unavailable'), 'it fails as unavailable');
    t.match((slow.value as Error).message, /statement timeout/);
    t.same(await db.query('SELECT 1 AS one'), [{ one: 1 }], 'the pool goes on');
  });
});
