import t from 'tap';
import { captureLogs } from '../lib/test-logger.ts';
import { createFakeClock } from '../lib/clock.ts';
import { startTestSystem, tempSqliteUrl } from '../app/test-system.ts';
import { openDatabase } from '../stores/open-database.ts';
import { createAccountStore } from './account-store.ts';
import { bootstrapAdmin } from './admin-bootstrap.ts';
import { ACCOUNT_MIGRATIONS } from './migrations.ts';

t.test('admin bootstrap: generated once, kept, then replaced by a configured password', async (t) => {
  const db = await openDatabase(tempSqliteUrl(t).url, { migrations: ACCOUNT_MIGRATIONS });
  t.teardown(() => db.close());
  const accounts = createAccountStore(db, { clock: createFakeClock() });
  const log = captureLogs('info');
  const announced: string[] = [];
  const options = { adminUser: 'admin', adminPassword: '', logger: log.logger, announce: (m: string) => void announced.push(m) };

  const first = await bootstrapAdmin(accounts, options);
  t.equal(announced.length, 1, 'the generated password is announced once');
  t.match(first.password, /^[A-Za-z0-9_-]{24}$/);
  t.match(announced[0], first.password!, 'the announcement carries it');
  t.equal(await accounts.verify('admin', 'admin', first.password!), 'allow', 'stored (hashed) for profile admin');

  const second = await bootstrapAdmin(accounts, options);
  t.equal(announced.length, 1, 'nothing announced at the next start');
  t.same(second, { username: 'admin', password: undefined }, 'the plaintext is not known any more');
  t.equal(await accounts.verify('admin', 'admin', first.password!), 'allow', 'the stored password is kept');
  t.match(log.text(), /client registration \(D\) cannot call the management interface until PORTOLAN_ADMIN_PASSWORD is set/);

  const third = await bootstrapAdmin(accounts, { ...options, adminPassword: 'chosen pw' });
  t.same(third, { username: 'admin', password: 'chosen pw' });
  t.equal(await accounts.verify('admin', 'admin', 'chosen pw'), 'allow', 'the configured password replaces the stored one');
  t.equal(await accounts.verify('admin', 'admin', first.password!), 'deny');
  t.notMatch(log.text(), first.password!, 'the generated password never reaches the log');
  t.notMatch(log.text(), 'chosen pw', 'nor the configured one');
});

t.test('the system stores the configured admin at start and exposes the accounts', async (t) => {
  const announced: string[] = [];
  const { system } = await startTestSystem(t, {
    config: { adminUser: 'root', adminPassword: 'configured pw' },
    announce: (m) => void announced.push(m),
  });
  t.equal(await system.accounts.verify('admin', 'root', 'configured pw'), 'allow');
  t.same(announced, [], 'nothing generated');
});
