import t from 'tap';
import { createHash } from 'node:crypto';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSessionStore } from './session-store.ts';

const LIFETIME_S = 600;
const IDLE_S = 120;

async function open(t: TapTest, url: string) {
  const db = await openDatabase(url, { migrations: SNAPSHOT_MIGRATIONS });
  t.teardown(() => db.close());
  await db.execute('DELETE FROM diagnostics_sessions'); // the subtests of one suite share its database
  const clock = createFakeClock();
  return { db, clock, sessions: createSessionStore(db, { clock, lifetimeSeconds: LIFETIME_S, idleSeconds: IDLE_S }) };
}

async function sessionSuite(t: TapTest, url: string) {
  t.test('a new session opens its account; its value is 256 random bits in base64url', async (t) => {
    const { sessions, clock } = await open(t, url);
    const { token, expiresMs } = await sessions.create('diagnostics/alice');
    t.match(token, /^[A-Za-z0-9_-]{43}$/);
    t.equal(expiresMs, clock.nowMs() + LIFETIME_S * 1000, 'it ends a lifetime after its creation');
    t.equal(await sessions.verify(token), 'diagnostics/alice');
    const other = await sessions.create('diagnostics/alice');
    t.not(other.token, token, 'each login is a session of its own');
  });

  t.test('only digests are stored: the table holds no cookie value', async (t) => {
    const { sessions, db } = await open(t, url);
    const { token } = await sessions.create('admin/admin');
    const rows = await db.query('SELECT * FROM diagnostics_sessions');
    t.equal(rows.length, 1);
    t.notOk(JSON.stringify(rows).includes(token), 'the token is nowhere in the row');
    t.equal(rows[0]!.token_hash, createHash('sha256').update(token).digest('hex'), 'its SHA-256 digest is the key');
  });

  t.test('unknown, empty and over-long values are refused; the over-long one is never looked up', async (t) => {
    const { sessions, db } = await open(t, url);
    const { token } = await sessions.create('diagnostics/alice');
    t.equal(await sessions.verify('x'.repeat(43)), undefined, 'unknown');
    t.equal(await sessions.verify(''), undefined, 'empty');
    t.equal(await sessions.verify(`${token}x`), undefined, 'a real value with one character more');
    // A store that fails every call proves the 1000-character value never reaches it (nor the hash).
    const failing = createSessionStore(
      { ...db, query: () => Promise.reject(new Error('looked up')), execute: () => Promise.reject(new Error('looked up')) },
      { clock: createFakeClock(), lifetimeSeconds: LIFETIME_S, idleSeconds: IDLE_S },
    );
    t.equal(await failing.verify('a'.repeat(1000)), undefined, 'a 1000-character cookie is refused before any lookup');
    t.equal(await failing.verify('a'.repeat(257)), undefined, 'one over the limit too');
    await t.rejects(failing.verify('a'.repeat(256)), /looked up/, 'at the limit it is looked up');
  });

  t.test('a session idle for the idle time ends, and its row is deleted', async (t) => {
    const { sessions, clock, db } = await open(t, url);
    const { token } = await sessions.create('diagnostics/alice');
    clock.advance(IDLE_S * 1000 - 1);
    t.equal(await sessions.verify(token), 'diagnostics/alice', 'one millisecond before the idle end it still works');
    clock.advance(IDLE_S * 1000);
    t.equal(await sessions.verify(token), undefined, 'idle for exactly the idle time: over');
    t.same(await db.query('SELECT account FROM diagnostics_sessions'), [], 'the row is gone');
    clock.advance(-IDLE_S * 1000);
    t.equal(await sessions.verify(token), undefined, 'and stays gone');
  });

  t.test('use extends the idle time but never the lifetime', async (t) => {
    const { sessions, clock } = await open(t, url);
    const { token, expiresMs } = await sessions.create('diagnostics/alice');
    // Used every 100 s (under the 120 s idle time): alive until the lifetime ends, not one moment longer.
    for (let used = 100; used < LIFETIME_S; used += 100) {
      clock.advance(100_000);
      t.equal(await sessions.verify(token), 'diagnostics/alice', `alive ${used} s after the login`);
    }
    clock.advance(expiresMs - 1 - clock.nowMs());
    t.equal(await sessions.verify(token), 'diagnostics/alice', 'one millisecond before the lifetime ends');
    clock.advance(1);
    t.equal(await sessions.verify(token), undefined, 'at the end of its lifetime it is over, however recently used');
  });

  t.test('ending a session closes it at once', async (t) => {
    const { sessions } = await open(t, url);
    const a = await sessions.create('diagnostics/alice');
    const b = await sessions.create('diagnostics/alice');
    await sessions.end(a.token);
    t.equal(await sessions.verify(a.token), undefined);
    t.equal(await sessions.verify(b.token), 'diagnostics/alice', 'the same account’s other session is untouched');
    await sessions.end('x'.repeat(1000));
    t.pass('ending an over-long value is a no-op');
  });

  t.test('expired rows are removed as new sessions are created, a bounded batch at a time', async (t) => {
    const { sessions, clock, db } = await open(t, url);
    const count = async () => Number((await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM diagnostics_sessions'))[0]!.n);
    for (let i = 0; i < 150; i++) await sessions.create(`diagnostics/u${i}`);
    clock.advance(IDLE_S * 1000);
    const fresh = await sessions.create('diagnostics/new');
    t.equal(await count(), 51, '100 idle rows removed by one login, 50 left for the next, plus the new one');
    await sessions.create('diagnostics/newer');
    t.equal(await count(), 2, 'the next login removes the rest');
    // Kept in use, so never idle: only its lifetime ends it.
    for (let used = 100; used < LIFETIME_S; used += 100) {
      clock.advance(100_000);
      t.equal(await sessions.verify(fresh.token), 'diagnostics/new', 'live sessions are kept');
    }
    clock.advance(100_000);
    await sessions.create('diagnostics/latest');
    t.same(
      (await db.query('SELECT account FROM diagnostics_sessions')).map((r) => r.account),
      ['diagnostics/latest'],
      'a row past its lifetime goes too, however recently used',
    );
  });
}

t.test('sessions on the embedded store', (t) => sessionSuite(t, tempSqliteUrl(t).url));

t.test('sessions on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await sessionSuite(t, url);
});
