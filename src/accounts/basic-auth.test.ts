import t from 'tap';
import { createFakeClock, type FakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { applyMigrations } from '../stores/migrations.ts';
import { openSqliteDatabase, SQLITE_MEMORY } from '../stores/sqlite.ts';
import type { AccessVerdict, AccountStore } from './account-store.ts';
import { basicAuthorization, createBasicAuthenticator, parseBasicAuth } from './basic-auth.ts';
import { createLoginBackoff, type LoginBackoffOptions } from './login-backoff.ts';
import { ACCOUNT_MIGRATIONS } from './migrations.ts';

t.test('parseBasicAuth reads user and password; the password may hold colons', async (t) => {
  t.same(parseBasicAuth(basicAuthorization('admin', 's3:cr:3t')), { username: 'admin', password: 's3:cr:3t' });
  t.same(parseBasicAuth(`bAsIc   ${Buffer.from('\u00e9mile:pw').toString('base64')}`), { username: '\u00e9mile', password: 'pw' });
  for (const bad of [
    undefined,
    '',
    'Bearer abc',
    'Basic',
    'Basic !!!',
    `Basic ${Buffer.from('nocolon').toString('base64')}`,
    `Basic ${Buffer.from(':pw').toString('base64')}`,
  ]) {
    t.equal(parseBasicAuth(bad), undefined, `refused: ${bad}`);
  }
  t.equal(parseBasicAuth([basicAuthorization('a', 'b'), basicAuthorization('c', 'd')]), undefined, 'two headers are refused');
});

/** An account store that counts verifications, with one user admin/pw; its login backoff in a real (embedded) store. */
async function countingStore(t: TapTest, clock: FakeClock) {
  const db = openSqliteDatabase({ path: SQLITE_MEMORY });
  t.teardown(() => db.close());
  await applyMigrations(db, ACCOUNT_MIGRATIONS);
  let changes = 0;
  let passwords: Record<string, string> = { admin: 'pw' };
  const store = {
    verifications: 0,
    async verify(_profile: string, username: string, password: string): Promise<AccessVerdict> {
      store.verifications++;
      return passwords[username] === password ? 'allow' : 'deny';
    },
    changes: () => changes,
    loginBackoff: (scope: string, options: LoginBackoffOptions = {}) => createLoginBackoff(db, { ...options, clock, scope }),
    change(next: Record<string, string>) {
      passwords = next;
      changes++;
    },
  };
  return store;
}

t.test('successful checks are remembered for the TTL; failures never are', async (t) => {
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
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
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', { clock });
  const old = basicAuthorization('admin', 'pw');
  t.equal(await check(old), true);
  store.change({ admin: 'new' });
  t.equal(await check(old), false, 'the old password is refused right after the change');
  t.equal(await check(basicAuthorization('admin', 'new')), true);
});

/** The answers to `attempts` basic-auth checks of one user and password, one every `everyMs` of fake time. */
async function answers(t: TapTest, user: string, password: string, attempts: number, everyMs: number) {
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', {
    clock,
    backoff: { failuresBeforeBackoff: 5, firstDelayMs: 1000, maxDelayMs: 8000 },
  });
  const seen: boolean[] = [];
  for (let i = 0; i < attempts; i++) {
    seen.push(await check(basicAuthorization(user, password)));
    clock.advance(everyMs);
  }
  return { seen, verifications: store.verifications };
}

t.test('past 5 failures for one user, attempts are refused unchecked, even with the right password, until the wait passes', async (t) => {
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', {
    clock,
    backoff: { failuresBeforeBackoff: 5, firstDelayMs: 1000, maxDelayMs: 8000 },
  });
  const wrong = basicAuthorization('admin', 'guess');
  const right = basicAuthorization('admin', 'pw');
  for (let i = 0; i < 5; i++) t.equal(await check(wrong), false);
  t.equal(store.verifications, 5);
  t.equal(await check(right), false, 'the right password is refused during the wait');
  t.equal(store.verifications, 5, 'without checking it');
  clock.advance(999);
  t.equal(await check(right), false, '1 ms before the wait passes');
  clock.advance(1);
  t.equal(await check(right), true, 'once it has passed, the right password is accepted');
  for (let i = 0; i < 5; i++) t.equal(await check(wrong), false);
  t.equal(store.verifications, 11, 'the success reset the count: 5 free failures again');

  // 200 wrong passwords within 15 s (the measurement): only a handful reach the password hash.
  const { seen, verifications } = await answers(t, 'admin', 'guess', 200, 75);
  t.ok(seen.every((allowed) => !allowed));
  t.equal(verifications, 8, '5 free, then one after each wait of 1, 2 and 4 s; the next wait (8 s) ends past 15 s');
});

t.test('an unknown user and a wrong password get identical answers, attempt by attempt', async (t) => {
  const wrongPassword = await answers(t, 'admin', 'guess', 40, 250);
  const unknownUser = await answers(t, 'nobody', 'guess', 40, 250);
  t.same(unknownUser, wrongPassword, 'same answers, same number of password checks');
  t.ok(wrongPassword.seen.every((allowed) => !allowed));
});

t.test('parallel requests: identical headers share one check; a burst of guesses gets only the free checks', async (t) => {
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', { clock });
  const right = await Promise.all(Array.from({ length: 20 }, () => check(basicAuthorization('admin', 'pw'))));
  t.ok(right.every(Boolean), "a client's 20 parallel first requests are all accepted");
  t.equal(store.verifications, 1, 'with one password check');
  const guesses = await Promise.all(Array.from({ length: 50 }, (_, i) => check(basicAuthorization('root', `guess${i}`))));
  t.ok(guesses.every((allowed) => !allowed));
  t.equal(store.verifications, 1 + 5, '5 of 50 parallel guesses were checked (the default free failures)');
});

t.test('one address trying many user names gets a budget across them; another address is not slowed by it', async (t) => {
  // Before: every new name bought 5 free scrypt checks, so 400 parallel names from one client stalled
  // the real administrator's login for seconds.
  const clock = createFakeClock();
  const store = await countingStore(t, clock);
  const check = createBasicAuthenticator(store as unknown as AccountStore, 'admin', { clock });
  const flood = await Promise.all(Array.from({ length: 400 }, (_, i) => check(basicAuthorization(`user${i}`, 'guess'), '198.51.100.7')));
  t.ok(flood.every((allowed) => !allowed));
  t.equal(store.verifications, 20, '20 of 400 names were checked: the address budget (4 x 5 free failures)');
  t.equal(await check(basicAuthorization('admin', 'pw'), '192.0.2.1'), true, 'the administrator, from elsewhere, is checked at once');
  t.equal(store.verifications, 21);
  t.equal(await check(basicAuthorization('admin', 'pw'), '198.51.100.7'), false, 'the flooding address waits, even with a right password');
});
