import t from 'tap';
import { createFakeClock } from '../lib/clock.ts';
import type { AccessVerdict, AccountStore } from './account-store.ts';
import { basicAuthorization, createBasicAuthenticator, parseBasicAuth } from './basic-auth.ts';

t.test('parseBasicAuth reads user and password; the password may hold colons', async (t) => {
  t.same(parseBasicAuth(basicAuthorization('admin', 's3:cr:3t')), { username: 'admin', password: 's3:cr:3t' });
  t.same(parseBasicAuth(`bAsIc   ${Buffer.from('\u00e9mile:pw').toString('base64')}`), { username: '\u00e9mile', password: 'pw' });
  for (const bad of [undefined, '', 'Bearer abc', 'Basic', 'Basic !!!', `Basic ${Buffer.from('nocolon').toString('base64')}`, `Basic ${Buffer.from(':pw').toString('base64')}`]) {
    t.equal(parseBasicAuth(bad), undefined, `refused: ${bad}`);
  }
  t.equal(parseBasicAuth([basicAuthorization('a', 'b'), basicAuthorization('c', 'd')]), undefined, 'two headers are refused');
});

/** An account store that counts verifications, with one user admin/pw. */
function countingStore() {
  let changes = 0;
  let passwords: Record<string, string> = { admin: 'pw' };
  const store = {
    verifications: 0,
    async verify(_profile: string, username: string, password: string): Promise<AccessVerdict> {
      store.verifications++;
      return passwords[username] === password ? 'allow' : 'deny';
    },
    changes: () => changes,
    change(next: Record<string, string>) {
      passwords = next;
      changes++;
    },
  };
  return store;
}

t.test('successful checks are remembered for the TTL; failures never are', async (t) => {
  const store = countingStore();
  const clock = createFakeClock();
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', { clock, cacheTtlMs: 60_000 });
  const good = basicAuthorization('admin', 'pw');
  t.equal(await check(good), true);
  t.equal(await check(good), true);
  t.equal(store.verifications, 1, 'the second check came from the cache');
  t.equal(await check(basicAuthorization('admin', 'nope')), false);
  t.equal(await check(basicAuthorization('admin', 'nope')), false);
  t.equal(store.verifications, 3, 'failures are checked every time');
  t.equal(await check(undefined), false);
  t.equal(store.verifications, 3, 'no header, no hash');
  clock.advance(60_001);
  t.equal(await check(good), true);
  t.equal(store.verifications, 4, 'checked again after the TTL');
});

t.test('a password change drops the remembered checks at once', async (t) => {
  const store = countingStore();
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', { clock: createFakeClock() });
  const old = basicAuthorization('admin', 'pw');
  t.equal(await check(old), true);
  store.change({ admin: 'new' });
  t.equal(await check(old), false, 'the old password is refused right after the change');
  t.equal(await check(basicAuthorization('admin', 'new')), true);
});
