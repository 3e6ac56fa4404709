// The snapshot records per account: isolation, idempotent updates, deletes; and the basic flow on PostgreSQL.
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { TapTest } from '../../lib/tap-test.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { healthyArchive, jobsSettled, processed, testService, testStore, tree, uploaded } from './test-snapshots-helpers.ts';

t.test('one account never sees or changes another account’s snapshots', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const id = await uploaded(service, 'alice', healthyArchive());
  await processed(service, 'alice', id);
  const [file] = (await service.files('alice', id))!;
  const [command] = (await service.commands('alice', id))!;

  t.same(await service.list('bob'), ['0']);
  t.equal(await service.get('bob', id), undefined);
  t.equal(await service.update('bob', id, { description: 'bob was here' }), undefined);
  t.equal(await service.diagnostics('bob', id), undefined);
  t.equal(await service.files('bob', id), undefined);
  t.equal(await service.file('bob', id, file!.id), undefined);
  t.equal(await service.commands('bob', id), undefined);
  t.equal(await service.command('bob', id, command!.id), undefined);
  t.equal(await service.remove('bob', id), 'not-found');
  t.same(await service.removeAll('bob'), []);

  const record = await service.get('alice', id);
  t.match(record, { account: 'alice', description: '', status: 'COMPLETE' }, 'alice’s snapshot is untouched');
  t.ok(await service.diagnostics('alice', id));
  t.equal(await service.get('alice', '999'), undefined, 'an unknown id');
});

t.test('an update sets the fields given, in any state, and the same update twice gives the same record', async (t) => {
  const store = await testStore(t);
  const idle = await testService(store, { start: false });
  const id = await uploaded(idle, 'alice', healthyArchive());
  const patch = { description: 'Before the upgrade window', support_case: 'C-20260101-0042' };
  const once = await idle.update('alice', id, patch);
  const twice = await idle.update('alice', id, patch);
  t.match(once, { status: 'PROCESSING', description: 'Before the upgrade window', supportCase: 'C-20260101-0042', visibleInGui: true });
  t.same(twice, once, 'idempotent');
  t.same(await idle.update('alice', id, {}), once, 'an empty patch changes nothing');
  await idle.stop();

  const service = await testService(store);
  const record = await processed(service, 'alice', id);
  t.match(
    record,
    { status: 'COMPLETE', description: 'Before the upgrade window', supportCase: 'C-20260101-0042' },
    'kept through processing',
  );
  const hidden = await service.update('alice', id, { visible_in_gui: false, support_case: '' });
  t.match(hidden, { visibleInGui: false, supportCase: '', description: 'Before the upgrade window' });
  t.same(await service.update('alice', id, { visible_in_gui: false, support_case: '' }), hidden);
});

t.test('delete-all removes the account’s snapshots in every state, their folders and waiting jobs', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const done = await uploaded(service, 'alice', healthyArchive());
  await processed(service, 'alice', done);
  await jobsSettled(store);
  await service.stop(); // the next upload stays waiting
  const waiting = await uploaded(service, 'alice', healthyArchive());
  const bobs = await uploaded(service, 'bob', healthyArchive());
  t.same(await service.removeAll('alice'), [done, waiting]);
  t.same(await service.list('alice'), ['0']);
  t.same(await service.removeAll('alice'), [], 'again: nothing more');
  t.same(await tree(store.dataDir), [bobs, `${bobs}/upload.tgz`], 'only bob’s folder is left');
  t.same(
    await store.db.query("SELECT payload FROM jobs WHERE state = 'queued'"),
    [{ payload: JSON.stringify({ id: bobs }) }],
    'only bob’s job waits',
  );
  t.equal(await service.remove('alice', done), 'not-found');
});

t.test('ids are numbers in upload order: 10 comes after 9', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const archive = healthyArchive();
  for (let i = 0; i < 11; i++) await uploaded(service, 'alice', archive);
  t.same(await service.list('alice'), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
});

async function basicFlow(t: TapTest, url?: string) {
  const store = await testStore(t, url);
  const service = await testService(store);
  const first = await uploaded(service, 'alice', healthyArchive());
  const second = await uploaded(service, 'alice', healthyArchive());
  t.not(first, second, 'the same file twice: two snapshots');
  const record = await processed(service, 'alice', first);
  t.match(record, { status: 'COMPLETE', hostname: 'device-1.example.net', rulesVersion: '2026.12.2', visibleInGui: true });
  t.equal((await service.diagnostics('alice', first))?.diagnostics.hit_count, 0, 'the healthy fixture has no hits');
  t.equal((await processed(service, 'alice', second)).status, 'COMPLETE');
  t.same(await service.update('alice', first, { description: 'x' }), await service.update('alice', first, { description: 'x' }));
  t.same(await service.list('alice'), ['0', first, second]);
  t.same(await service.list('bob'), ['0']);
  t.same(await service.removeAll('alice'), [first, second]);
  t.same(await tree(store.dataDir), []);
}

t.test('the basic flow on SQLite', (t) => basicFlow(t));

t.test('the basic flow on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await basicFlow(t, url);
});

t.test(
  'at start, the folder an upload left without its row is removed once it is a day old; younger ones and real snapshots stay',
  async (t) => {
    const store = await testStore(t);
    const first = await testService(store, { concurrency: 0 }); // its upload stays queued, its folder kept
    const id = await uploaded(first, 'alice', healthyArchive());
    await first.stop();
    const now = store.clock.nowMs() / 1000;
    const old = now - 3 * 86_400;
    for (const [orphan, ageSeconds] of [
      ['900', 2 * 86_400],
      ['901', 3600],
    ] as const) {
      await mkdir(join(store.dataDir, orphan), { recursive: true });
      await writeFile(join(store.dataDir, orphan, 'upload.tgz'), 'partial');
      await utimes(join(store.dataDir, orphan), now - ageSeconds, now - ageSeconds);
    }
    await utimes(join(store.dataDir, id), old, old);
    await testService(store, { concurrency: 0 });
    t.notOk(existsSync(join(store.dataDir, '900')), 'a day-old orphan is removed');
    t.ok(existsSync(join(store.dataDir, '901')), 'an upload that may still be arriving stays');
    t.ok(existsSync(join(store.dataDir, id)), 'a snapshot with its row stays, however old');
  },
);
