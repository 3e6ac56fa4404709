import t from 'tap';
import type { TapTest } from '../../lib/tap-test.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { withTestPostgres, withTestSchema } from '../../stores/test-postgres.ts';
import { ACCESS_SESSION_MIGRATIONS } from './migrations.ts';
import { createSqlAccessSessionStore, type AccessSessionRecord } from './store.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const LIFETIME = 300_000;
const session = (id: string, variables: Record<string, string> = {}, createdMs = T0): AccessSessionRecord => ({
  id,
  createdMs,
  expiresMs: createdMs + LIFETIME,
  variables,
});

/** The store's behaviour, written once and run on each engine; `open` gives a fresh, migrated database. */
function runStoreSuite(t: TapTest, open: (t: TapTest) => Promise<string>) {
  const fresh = async (t: TapTest) => {
    const db = await openDatabase(await open(t), { migrations: ACCESS_SESSION_MIGRATIONS });
    t.teardown(() => db.close());
    return { db, store: createSqlAccessSessionStore(db) };
  };

  t.test('a session reads back with every variable as stored', async (t) => {
    const { store } = await fresh(t);
    // JSON.parse, as the request body arrives: `__proto__` is an own member, not the prototype.
    const variables = JSON.parse('{"session.a": "ünïcødé ✓ \\"quoted\\" \\\\ back", "__proto__": "only a name", "empty": ""}');
    variables.long = 'x'.repeat(65536);
    const stored = session('s1', variables);
    await store.create(stored);
    const read = await store.get('s1', T0);
    t.same(read, stored);
    t.equal(Object.getOwnPropertyDescriptor(read!.variables, '__proto__')?.value, 'only a name');
    t.equal(await store.get('unknown', T0), undefined);
  });

  t.test('a session is live until its expiry and gone from that moment on', async (t) => {
    const { store } = await fresh(t);
    await store.create(session('s1', { a: '1' }));
    t.ok(await store.get('s1', T0 + LIFETIME - 1), 'live 1 ms before expiry');
    t.equal(await store.get('s1', T0 + LIFETIME), undefined, 'gone at expiry');
    t.equal(await store.setVariables('s1', T0 + LIFETIME, { b: '2' }), undefined, 'an expired session takes no variables');
    t.equal(await store.delete('s1', T0 + LIFETIME), false, 'an expired session cannot be deleted');
  });

  t.test('setting variables overwrites those names and keeps the others', async (t) => {
    const { store } = await fresh(t);
    await store.create(session('s1', { keep: 'k', change: 'old' }));
    const updated = await store.setVariables('s1', T0 + 1, { change: 'new', added: 'a' });
    t.same(updated?.variables, { keep: 'k', change: 'new', added: 'a' });
    t.same((await store.get('s1', T0 + 2))?.variables, { keep: 'k', change: 'new', added: 'a' }, 'and it is stored');
    t.equal(await store.setVariables('unknown', T0, { a: '1' }), undefined, 'an unknown session takes no variables');
  });

  t.test('concurrent writers of different names both keep their variables', async (t) => {
    const { store } = await fresh(t);
    await store.create(session('s1'));
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.setVariables('s1', T0, { [`v${i}`]: String(i) })));
    t.same((await store.get('s1', T0))?.variables, Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`v${i}`, String(i)])));
  });

  t.test('delete removes a live session once', async (t) => {
    const { store } = await fresh(t);
    await store.create(session('s1'));
    t.equal(await store.delete('s1', T0), true);
    t.equal(await store.get('s1', T0), undefined);
    t.equal(await store.delete('s1', T0), false, 'the second delete finds nothing');
  });

  t.test('the sweep removes exactly the expired rows', async (t) => {
    const { db, store } = await fresh(t);
    await store.create(session('old', {}, T0));
    await store.create(session('older', {}, T0 - 1000));
    await store.create(session('new', {}, T0 + 1000));
    t.equal(await store.deleteExpired(T0 + LIFETIME), 2);
    t.same(
      (await db.query('SELECT id FROM access_sessions')).map((r) => r.id),
      ['new'],
      'only the live row is left',
    );
    t.equal(await store.deleteExpired(T0 + LIFETIME), 0, 'a second sweep finds nothing');
  });
}

t.test('the access-session store on the embedded engine', async (t) => {
  runStoreSuite(t, async (t) => tempSqliteUrl(t).url);
});

t.test('the access-session store on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  runStoreSuite(t, (t) => withTestSchema(t, url));
});
