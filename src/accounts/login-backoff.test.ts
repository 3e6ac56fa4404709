// The login backoff lives in the store: run on both engines, and with two handles on one store (two
// processes) counting together.
import t from 'tap';
import { join } from 'node:path';
import { createFakeClock, type FakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import type { Database } from '../stores/database.ts';
import { applyMigrations } from '../stores/migrations.ts';
import { openPostgresDatabase } from '../stores/postgres.ts';
import { openSqliteDatabase } from '../stores/sqlite.ts';
import { withTestPostgres, withTestSchema } from '../stores/test-postgres.ts';
import { tempSqliteUrl } from '../app/test-system.ts';
import { ACCOUNT_MIGRATIONS } from './migrations.ts';
import { createLoginBackoff, type LoginBackoff, type LoginBackoffOptions } from './login-backoff.ts';

/** One attempt that fails when it is allowed to run; whether it ran. */
const failOnce = async (backoff: LoginBackoff, name: string) => {
  if (!(await backoff.tryStart(name))) return false;
  await backoff.finish(name, 'failure');
  return true;
};

/** `count` handles on one fresh, migrated store (each as another process would have). */
type OpenStore = (t: TapTest, count: number) => Promise<Database[]>;

function backoffSuite(t: TapTest, open: OpenStore): void {
  const one = async (t: TapTest, options: LoginBackoffOptions, clock: FakeClock = createFakeClock(), scope = 'admin:name') => {
    const [db] = await open(t, 1);
    return createLoginBackoff(db!, { ...options, clock, scope });
  };

  t.test('past the free failures, the wait doubles with each failure up to its cap', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 3, firstDelayMs: 1000, maxDelayMs: 4000 }, clock);
    for (let i = 0; i < 3; i++) t.ok(await failOnce(backoff, 'admin'), `free failure ${i + 1} is checked`);
    for (const wait of [1000, 2000, 4000, 4000]) {
      clock.advance(wait - 1);
      t.notOk(await backoff.tryStart('admin'), `refused 1 ms before the ${wait} ms wait passes`);
      clock.advance(1);
      t.ok(await failOnce(backoff, 'admin'), `checked once the ${wait} ms wait has passed`);
    }
    t.ok(await backoff.tryStart('other'), 'other names are not affected');
  });

  t.test('a success resets the name: it gets its free failures again', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 2, firstDelayMs: 1000 }, clock);
    await failOnce(backoff, 'admin');
    await failOnce(backoff, 'admin');
    clock.advance(1000);
    t.ok(await backoff.tryStart('admin'));
    await backoff.finish('admin', 'success');
    t.equal(await backoff.trackedNames(), 0, 'a name that succeeded is not remembered');
    t.ok(await failOnce(backoff, 'admin'));
    t.ok(await failOnce(backoff, 'admin'), 'two free failures again');
    t.notOk(await backoff.tryStart('admin'));
  });

  t.test('a store that does not answer neither counts as a failure nor resets', async (t) => {
    const backoff = await one(t, { failuresBeforeBackoff: 2 });
    await failOnce(backoff, 'admin');
    for (let i = 0; i < 5; i++) {
      t.ok(await backoff.tryStart('admin'));
      await backoff.finish('admin', 'no-answer');
    }
    t.ok(await failOnce(backoff, 'admin'), 'the second failure is still free');
    t.notOk(await backoff.tryStart('admin'), 'and then the backoff starts');
  });

  t.test('checks under way count: a parallel burst gets the free checks only, then one at a time', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 5, firstDelayMs: 1000 }, clock);
    const started = (await Promise.all(Array.from({ length: 50 }, () => backoff.tryStart('admin')))).filter(Boolean).length;
    t.equal(started, 5, '5 of 50 parallel attempts are checked');
    for (let i = 0; i < 5; i++) await backoff.finish('admin', 'failure');
    clock.advance(1000);
    const after = (await Promise.all(Array.from({ length: 50 }, () => backoff.tryStart('admin')))).filter(Boolean).length;
    t.equal(after, 1, 'after the wait, one check at a time');
  });

  t.test('a check whose process died stops counting once its lease is over', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 2 }, clock);
    t.ok(await backoff.tryStart('admin'));
    t.ok(await backoff.tryStart('admin'), 'two checks under way (never finished: their process died)');
    t.notOk(await backoff.tryStart('admin'), 'a third waits for them');
    clock.advance(10_000);
    t.ok(await backoff.tryStart('admin'), 'past the lease they no longer hold the name');
  });

  t.test('checks left by dead processes stop counting one lease after they began, even while new checks start', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 5 }, clock); // the default lease: 10 s
    for (let i = 0; i < 4; i++) t.ok(await backoff.tryStart('admin'), `abandoned check ${i + 1}`);
    clock.advance(5_000);
    t.ok(await backoff.tryStart('admin'), 'a fifth check starts (abandoned too)');
    t.notOk(await backoff.tryStart('admin'), 'five under way: the next waits');
    clock.advance(5_000);
    t.ok(await backoff.tryStart('admin'), 'the batch began one lease ago: a later check does not extend it');
  });

  t.test('a name with no failure on record is clear; a failure or a wait is not', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 1, firstDelayMs: 1000 }, clock);
    t.ok(await backoff.isClear('admin'), 'never tried');
    t.ok(await backoff.tryStart('admin'));
    t.ok(await backoff.isClear('admin'), 'a check under way is no failure');
    await backoff.finish('admin', 'failure');
    t.notOk(await backoff.isClear('admin'), 'one failure on record');
    clock.advance(1000);
    t.ok(await backoff.tryStart('admin'));
    await backoff.finish('admin', 'success');
    t.ok(await backoff.isClear('admin'), 'a success clears it');
  });

  t.test('memory is bounded: past maxTrackedNames the least recently tried names are forgotten', async (t) => {
    const clock = createFakeClock();
    const backoff = await one(t, { failuresBeforeBackoff: 1, maxTrackedNames: 100 }, clock);
    await failOnce(backoff, 'first');
    // Names as long as a header allows are kept as fixed-size hashes; their count is what is bounded.
    for (let i = 0; i < 400; i++) {
      clock.advance(1);
      await failOnce(backoff, `${'x'.repeat(8000)}${i}`);
    }
    const tracked = await backoff.trackedNames();
    t.ok(tracked >= 100 && tracked < 100 + 16, `about 100 names are remembered (${tracked})`);
    t.ok(await backoff.tryStart('first'), 'the oldest name was forgotten');
    t.notOk(await backoff.tryStart(`${'x'.repeat(8000)}399`), 'the newest is still waiting');
  });

  t.test('scopes do not share a count', async (t) => {
    const [db] = await open(t, 1);
    const clock = createFakeClock();
    const names = createLoginBackoff(db!, { clock, scope: 'admin:name', failuresBeforeBackoff: 1 });
    const addresses = createLoginBackoff(db!, { clock, scope: 'admin:address', failuresBeforeBackoff: 1 });
    await failOnce(names, '192.0.2.1');
    t.notOk(await names.tryStart('192.0.2.1'));
    t.ok(await addresses.tryStart('192.0.2.1'), 'the same text in another scope is another name');
  });

  t.test('failuresBeforeBackoff 0 turns the backoff off', async (t) => {
    const backoff = await one(t, { failuresBeforeBackoff: 0 });
    let checked = 0;
    for (let i = 0; i < 200; i++) if (await failOnce(backoff, 'admin')) checked++;
    t.equal(checked, 200, 'every one of 200 failures in a row is checked');
    t.equal(await backoff.trackedNames(), 0);
  });

  t.test('two processes on one store count together: N processes do not multiply the budget', async (t) => {
    const [a, b] = await open(t, 2);
    const clock = createFakeClock();
    const options = { clock, scope: 'admin:name', failuresBeforeBackoff: 5, firstDelayMs: 1000 };
    const first = createLoginBackoff(a!, options);
    const second = createLoginBackoff(b!, options);
    // A burst spread over both processes: no more checks than a sequence in one.
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? first : second).tryStart('admin')));
    t.equal(burst.filter(Boolean).length, 5, '5 of 40 parallel guesses over two processes are checked');
    for (let i = 0; i < 5; i++) await (i % 2 ? first : second).finish('admin', 'failure');
    t.notOk(await first.tryStart('admin'), 'the first process refuses');
    t.notOk(await second.tryStart('admin'), 'and so does the second: the failures were counted together');
    clock.advance(1000);
    t.ok(await second.tryStart('admin'), 'after the wait, one check, in either process');
    t.notOk(await first.tryStart('admin'), 'one at a time across processes');
    await second.finish('admin', 'success');
    t.ok(await first.tryStart('admin'), "a success in one process resets the name in the other's");
  });

  t.test('the names are hashed with one secret of the store: no user name is stored', async (t) => {
    const [a, b] = await open(t, 2);
    const clock = createFakeClock();
    await failOnce(createLoginBackoff(a!, { clock, scope: 'admin:name' }), 'alice@example.com');
    await failOnce(createLoginBackoff(b!, { clock, scope: 'admin:name' }), 'alice@example.com');
    const rows = await a!.query<{ name_hash: string; failures: number | string }>('SELECT name_hash, failures FROM login_backoff');
    t.equal(rows.length, 1, 'both processes hashed the name alike: one row');
    t.equal(Number(rows[0]!.failures), 2);
    t.notMatch(rows[0]!.name_hash, /alice/);
    t.equal(rows[0]!.name_hash.length, 44, 'a fixed-size HMAC');
  });
}

t.test('SQLite', async (t) => {
  backoffSuite(t, async (t, count) => {
    const file = join(tempSqliteUrl(t).dir, 'portolan.db');
    const handles = Array.from({ length: count }, () => openSqliteDatabase({ path: file }));
    t.teardown(() => Promise.all(handles.map((db) => db.close())));
    await applyMigrations(handles[0]!, ACCOUNT_MIGRATIONS);
    return handles;
  });
});

t.test('PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (!url) return;
  backoffSuite(t, async (t, count) => {
    const schemaUrl = await withTestSchema(t, url);
    const handles = Array.from({ length: count }, () => openPostgresDatabase({ connectionString: schemaUrl }));
    t.teardown(() => Promise.all(handles.map((db) => db.close())));
    await applyMigrations(handles[0]!, ACCOUNT_MIGRATIONS);
    return handles;
  });
});
