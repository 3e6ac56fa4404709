import t from 'tap';
import { DatabaseUrlError, describeDatabaseUrl, parseDatabaseUrl, redactCredentials } from './database-url.ts';

t.test('sqlite: settings name a file relative to the working directory, or memory', async (t) => {
  t.same(parseDatabaseUrl('sqlite:./data/portolan.db', '/srv/app'), { engine: 'sqlite', path: '/srv/app/data/portolan.db' });
  t.same(parseDatabaseUrl('sqlite:data/portolan.db', '/srv/app'), { engine: 'sqlite', path: '/srv/app/data/portolan.db' });
  t.same(parseDatabaseUrl('sqlite:/var/lib/portolan.db', '/srv/app'), { engine: 'sqlite', path: '/var/lib/portolan.db' });
  t.same(parseDatabaseUrl('sqlite:///var/lib/portolan.db', '/srv/app'), { engine: 'sqlite', path: '/var/lib/portolan.db' });
  t.same(parseDatabaseUrl('sqlite::memory:'), { engine: 'sqlite', path: ':memory:' });
});

t.test('postgres:// and postgresql:// settings select PostgreSQL, unchanged', async (t) => {
  t.same(parseDatabaseUrl('postgres://app:pw@db:5432/portolan'), {
    engine: 'postgres',
    connectionString: 'postgres://app:pw@db:5432/portolan',
  });
  t.same(parseDatabaseUrl('postgresql://db/portolan'), { engine: 'postgres', connectionString: 'postgresql://db/portolan' });
});

t.test('anything else is refused with a clear error that does not repeat the setting', async (t) => {
  for (const setting of ['mysql://admin:hunter2@db/portolan', 'hunter2', '', 'sqlite:', 'redis://:hunter2@cache:6379']) {
    const error = t.throws(() => parseDatabaseUrl(setting)) as Error;
    t.type(error, DatabaseUrlError);
    t.notMatch(error.message, 'hunter2', `no secret from '${setting.replace('hunter2', '…')}' in the message`);
    t.match(error.message, /sqlite:/, 'the message says what is accepted');
  }
  t.match((t.throws(() => parseDatabaseUrl('mysql://db/x')) as Error).message, /scheme 'mysql:'/);
});

t.test('the loggable form drops the password, wherever it is', async (t) => {
  t.equal(describeDatabaseUrl('postgres://app:s3cret@db:5432/portolan'), 'postgres://app@db:5432/portolan');
  t.equal(describeDatabaseUrl('postgresql://app:p@ss:w0rd@db/portolan'), 'postgresql://app@db/portolan', 'an unencoded @ in the password');
  t.equal(describeDatabaseUrl('postgres://:s3cret@db/portolan'), 'postgres://@db/portolan');
  t.equal(
    describeDatabaseUrl('postgres://db/portolan?user=app&password=s3cret&sslmode=require'),
    'postgres://db/portolan?user=app&password=[redacted]&sslmode=require',
  );
  t.equal(describeDatabaseUrl('postgres://app@db/portolan'), 'postgres://app@db/portolan', 'nothing to remove');
  t.equal(describeDatabaseUrl('sqlite:./data/portolan.db'), 'sqlite:./data/portolan.db');
});

t.test('known secrets are removed from any message', async (t) => {
  t.equal(redactCredentials('failed for postgres://u:pw@h/d with pw again', ['pw']), 'failed for postgres://u@h/d with [redacted] again');
});
