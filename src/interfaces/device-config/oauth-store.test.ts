import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './migrations.ts';
import { createSqlDeviceOauthStore, hashClientSecret, type NewClientApp } from './oauth-store.ts';

const app = (name: string, clientId: string): NewClientApp => ({
  partition: 'Common',
  name,
  appName: name,
  authType: 'secret',
  clientId,
  clientSecret: `secret-of-${name}`,
  scopes: 'openid profile',
  grantPassword: 'enabled',
  grantCode: 'disabled',
  grantToken: 'disabled',
  generateRefreshToken: 'true',
  accessTokenLifetime: 5,
  authCodeLifetime: 5,
  refreshTokenLifetime: 480,
  refreshTokenUsageLimit: 64,
});

async function storeSuite(t: TapTest, url: string) {
  const db = await openDatabase(url, { migrations: DEVICE_CONFIG_MIGRATIONS });
  t.teardown(() => db.close());
  const store = createSqlDeviceOauthStore(db, { clock: createFakeClock() });

  t.same(
    await store.getAccessProfile('Common', 'oauth_access_policy'),
    { partition: 'Common', name: 'oauth_access_policy', generation: 1 },
    'seeded access policy',
  );
  t.same(await store.listBoundClientApps('Common', 'oauth_server'), [], 'seeded OAuth profile, nothing bound');

  const created = await store.createClientApp(app('a-default-1', 'id-a'));
  t.equal(created.ok, true);
  t.same(await store.createClientApp(app('a-default-1', 'id-other')), { ok: false, error: 'exists' }, 'one name per partition');
  const [row] = await db.query('SELECT * FROM device_oauth_client_apps');
  t.equal(row!.client_secret_hash, hashClientSecret('secret-of-a-default-1'), 'the secret is stored hashed');
  t.notOk(Object.values(row!).includes('secret-of-a-default-1'), 'and never in clear');
  t.equal(await store.checkClientSecret('Common', 'a-default-1', 'secret-of-a-default-1'), true);
  t.equal(await store.checkClientSecret('Common', 'a-default-1', 'guess'), false);

  t.same(await store.bindClientApp('Common', 'oauth_server', 'a-default-1'), {
    ok: true,
    binding: { partition: 'Common', name: 'a-default-1', generation: 1 },
  });
  t.same(await store.bindClientApp('Common', 'oauth_server', 'a-default-1'), { ok: false, error: 'already-bound' });
  t.same(await store.bindClientApp('Common', 'no_profile', 'a-default-1'), { ok: false, error: 'profile-not-found' });
  t.same(await store.bindClientApp('Common', 'oauth_server', 'missing'), { ok: false, error: 'app-not-found' });
  t.same(await store.listBoundClientApps('Common', 'oauth_server'), ['a-default-1']);

  t.equal((await store.applyAccessPolicy('Common', 'oauth_access_policy'))!.generation, 2);
  t.equal((await store.applyAccessPolicy('Common', 'oauth_access_policy'))!.generation, 3, 'one more each time');
  t.equal(await store.applyAccessPolicy('Common', 'missing_policy'), undefined);

  t.equal(await store.deleteClientApp('Common', 'a-default-1'), true);
  t.same(await store.listBoundClientApps('Common', 'oauth_server'), [], 'deleting the application removed its binding');
  t.same(await store.listClientApps(), []);
  t.equal(await store.deleteClientApp('Common', 'a-default-1'), false);
}

t.test('device OAuth objects on the embedded store', (t) => storeSuite(t, tempSqliteUrl(t).url));

t.test('device OAuth objects on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await storeSuite(t, url);
});
