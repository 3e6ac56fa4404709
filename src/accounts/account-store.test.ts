import t from 'tap';
import { parsePasswordHash, verifyPassword } from './password-hash.ts';
import { createFakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { tempSqliteUrl } from '../app/test-system.ts';
import { openDatabase } from '../stores/open-database.ts';
import { withTestPostgres } from '../stores/test-postgres.ts';
import { createAccountStore } from './account-store.ts';
import { ACCOUNT_MIGRATIONS } from './migrations.ts';

async function accountSuite(t: TapTest, url: string) {
  const db = await openDatabase(url, { migrations: ACCOUNT_MIGRATIONS });
  t.teardown(() => db.close());
  const clock = createFakeClock();
  const accounts = createAccountStore(db, { clock });

  t.equal(await accounts.verify('registration_check', 'alice', 'pw'), 'not_started', 'a profile without users was never set up');
  t.equal(await accounts.setPassword('registration_check', 'alice@example.com', 'c0rrect horse'), 'created');
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'c0rrect horse'), 'allow');
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'wrong'), 'deny');
  t.equal(await accounts.verify('registration_check', 'bob', 'c0rrect horse'), 'deny', 'an unknown user of a set-up profile');
  t.equal(await accounts.verify('admin', 'alice@example.com', 'c0rrect horse'), 'not_started', 'users belong to one profile');

  const [row] = await db.query<{ password_hash: string }>('SELECT password_hash FROM account_users');
  t.match(row!.password_hash, /^\$scrypt\$/, 'stored hashed');
  t.notMatch(row!.password_hash, /c0rrect/);

  const before = accounts.changes();
  clock.advance(60_000);
  t.equal(await accounts.setPassword('registration_check', 'alice@example.com', 'new password'), 'updated');
  t.ok(accounts.changes() > before, 'a change is counted');
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'c0rrect horse'), 'deny', 'the old password no longer works');
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'new password'), 'allow');
  await t.rejects(accounts.setPassword('registration_check', 'carol:x', 'pw'), /colon/, 'a username with a colon is refused');
  await t.rejects(accounts.setPassword('registration_check', 'carol', ''), /password must be/);

  t.equal(await accounts.add('admin', 'admin', 'root pw'), 'created');
  t.equal(await accounts.add('admin', 'admin', 'other pw'), 'exists', 'add never replaces');
  t.equal(await accounts.verify('admin', 'admin', 'root pw'), 'allow');
  t.same(await accounts.list(), [
    { profile: 'admin', username: 'admin', createdAt: '2026-01-01T00:01:00.000Z', updatedAt: '2026-01-01T00:01:00.000Z' },
    {
      profile: 'registration_check',
      username: 'alice@example.com',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:01:00.000Z',
    },
  ]);
  t.same(
    (await accounts.list('admin')).map((a) => a.username),
    ['admin'],
  );
  t.equal(await accounts.has('admin', 'admin'), true);

  t.equal(await accounts.remove('registration_check', 'alice@example.com'), true);
  t.equal(await accounts.remove('registration_check', 'alice@example.com'), false, 'already gone');
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'new password'), 'not_started', 'the profile has no users left');
}

t.test('accounts on the embedded store', (t) => accountSuite(t, tempSqliteUrl(t).url));

t.test('accounts on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await accountSuite(t, url);
});

t.test('an unknown user costs a full password check, like a wrong password (no timing oracle)', async (t) => {
  const db = await openDatabase(tempSqliteUrl(t).url, { migrations: ACCOUNT_MIGRATIONS });
  t.teardown(() => db.close());
  // Counts the scrypt comparisons instead of timing them: the machine's speed cannot change the answer.
  const compared: string[] = [];
  const accounts = createAccountStore(db, {
    clock: createFakeClock(),
    verifyPassword: async (password, encoded) => {
      compared.push(parsePasswordHash(encoded) ? 'scrypt' : 'not a hash');
      return verifyPassword(password, encoded);
    },
  });
  await accounts.setPassword('p', 'known', 'pw');
  t.equal(await accounts.verify('p', 'known', 'wrong'), 'deny');
  t.same(compared, ['scrypt'], 'a wrong password: one scrypt comparison');
  t.equal(await accounts.verify('p', 'nobody', 'wrong'), 'deny');
  t.same(compared, ['scrypt', 'scrypt'], 'an unknown user: one scrypt comparison too, against a decoy hash');
});
