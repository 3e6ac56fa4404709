import t from 'tap';
import { JOB_MIGRATIONS } from '../../stores/job-queue.ts';
import { openDatabase } from '../../stores/open-database.ts';
import type { Database } from '../../stores/database.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './migrations.ts';
import { createSqlDeclarationStore, parsedTask } from './declaration-store.ts';

/**
 * A database whose `failAt`-th statement (counted in and out of transactions) throws, as a crash in
 * the middle would stop it: a save not wrapped in one transaction leaves what it wrote before.
 */
function failingAt(db: Database, failAt: number): Database {
  const counter = { n: 0 };
  const wrap = (inner: Database): Database => ({
    ...inner,
    engine: inner.engine,
    query: (sql, params) => inner.query(sql, params),
    execute: async (sql, params) => {
      counter.n += 1;
      if (counter.n === failAt) throw new Error('cut in the middle');
      return inner.execute(sql, params);
    },
    transaction: (work, options) => inner.transaction((tx) => work(wrap(tx)), options),
  });
  return wrap(db);
}

const tenant = (round: number) => JSON.stringify({ class: 'Tenant', A1: { class: 'Application', remark: `round ${round}` } });
const full = (members: Record<string, string>) =>
  `{${Object.entries(members)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}`;

t.test('a deployment is saved whole or not at all', async (t) => {
  const db = await openDatabase('sqlite::memory:', { migrations: [...JOB_MIGRATIONS, ...DEVICE_CONFIG_MIGRATIONS] });
  t.teardown(() => db.close());
  const store = createSqlDeclarationStore(db);
  const header = { class: '"ADC"', schemaVersion: '"3.0.0"' };
  await store.save(
    full(header),
    [
      { tenant: 'T1', text: tenant(1) },
      { tenant: 'T2', text: tenant(1) },
    ],
    full({ ...header, T1: tenant(1), T2: tenant(1) }),
    1,
    'h1',
  );

  // Statements of a save: header, T1, T2, history, prune. Cut after T1 was written (the third one).
  const cut = createSqlDeclarationStore(failingAt(db, 3));
  await t.rejects(
    cut.save(
      full(header),
      [
        { tenant: 'T1', text: tenant(2) },
        { tenant: 'T2', text: tenant(2) },
      ],
      full({ ...header, T1: tenant(2), T2: tenant(2) }),
      2,
      'h2',
    ),
    /cut in the middle/,
  );
  const saved = await store.load();
  t.same(
    saved.tenants.map(([, text]) => text),
    [tenant(1), tenant(1)],
    'both tenants are still the old ones: T1 was rolled back with the rest',
  );
  t.equal(saved.header, full(header), 'the header as saved');
  t.same(await store.history(0), full({ ...header, T1: tenant(1), T2: tenant(1) }), 'and the history has no half entry');

  await store.save(full(header), [{ tenant: 'T1', text: null }], full({ ...header, T2: tenant(1) }), 3, 'h3');
  t.same(
    (await store.load()).tenants.map(([name]) => name),
    ['T2'],
    'a null change removes the tenant',
  );
  t.same(await store.history(1), full({ ...header, T1: tenant(1), T2: tenant(1) }), 'history goes back one deployment at a time');
});

t.test('task records: newest first, kept to a number', async (t) => {
  const db = await openDatabase('sqlite::memory:', { migrations: [...JOB_MIGRATIONS, ...DEVICE_CONFIG_MIGRATIONS] });
  t.teardown(() => db.close());
  const store = createSqlDeclarationStore(db);
  for (let i = 0; i < 5; i++)
    await store.putTask({
      id: `task-${i}`,
      order: i,
      state: 'done',
      request: JSON.stringify({ i }),
      record: JSON.stringify({ id: `task-${i}` }),
    });
  await store.pruneTasks(3);
  t.same(
    (await store.listTasks(10)).map((task) => task.id),
    ['task-4', 'task-3', 'task-2'],
  );
  t.same(parsedTask((await store.getTask('task-4'))!).record, { id: 'task-4' }, 'the record as it was written');
  t.equal(await store.getTask('task-0'), undefined, 'older ones are forgotten');
});

t.test('task records: a queued task keeps its record however many synchronous operations finish after it', async (t) => {
  const db = await openDatabase('sqlite::memory:', { migrations: [...JOB_MIGRATIONS, ...DEVICE_CONFIG_MIGRATIONS] });
  t.teardown(() => db.close());
  const store = createSqlDeclarationStore(db);
  const put = (id: string, order: number, state: 'in progress' | 'done') =>
    store.putTask({ id, order, state, request: '{}', record: JSON.stringify({ id }) });
  await put('queued-0', 0, 'in progress');
  await put('queued-1', 1, 'in progress');
  t.ok(await store.finishTask('queued-0', JSON.stringify({ id: 'queued-0', done: true })));
  for (let i = 2; i < 7; i++) await put(`sync-${i}`, i, 'done');
  await store.pruneTasks(3);
  t.same(
    (await store.listTasks(10)).map((task) => task.id),
    ['sync-6', 'sync-5', 'sync-4', 'queued-1', 'queued-0'],
    'the newest 3 synchronous records, the finished queued one, and the one still queued',
  );
  t.same(parsedTask((await store.getTask('queued-0'))!).record, { id: 'queued-0', done: true }, 'its outcome stays readable');

  for (let i = 7; i < 10; i++) {
    await put(`queued-${i}`, i, 'in progress');
    await store.finishTask(`queued-${i}`, JSON.stringify({ id: `queued-${i}` }));
  }
  await store.pruneTasks(3);
  t.same(
    (await store.listTasks(10)).map((task) => task.id),
    ['queued-9', 'queued-8', 'queued-7', 'sync-6', 'sync-5', 'sync-4', 'queued-1'],
    'queued records are kept to the number among themselves (queued-1 still waits)',
  );
});
