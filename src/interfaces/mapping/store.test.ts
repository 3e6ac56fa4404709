import t from 'tap';
import { openSqliteDatabase, SQLITE_MEMORY } from '../../stores/sqlite.ts';
import { applyMigrations } from '../../stores/migrations.ts';
import type { Database } from '../../stores/database.ts';
import { MAPPING_MIGRATIONS } from './migrations.ts';
import { VESSELS } from './seed-data.ts';
import { createSqlMappingStore } from './store.ts';

t.test('survey records are read once, then at hand: no promise, the same value every time', async (t) => {
  const db = openSqliteDatabase({ path: SQLITE_MEMORY });
  t.teardown(() => db.close());
  await applyMigrations(db, MAPPING_MIGRATIONS);
  let reads = 0;
  const counting: Database = { ...db, query: (sql, params) => (reads++, db.query(sql, params)) };
  const store = createSqlMappingStore(counting);

  const first = store.listVesselSummaries();
  t.ok(first instanceof Promise, 'the first call reads the store');
  const summaries = await first;
  t.same(
    summaries,
    VESSELS.map(({ id, type, crew, status }) => ({ id, type, crew, status })),
  );
  const again = store.listVesselSummaries();
  t.notOk(again instanceof Promise, 'then the list is at hand');
  t.equal(again, summaries, 'the same list');
  t.same(await store.getVessel(VESSELS[0]!.id), VESSELS[0]);
  t.same(store.getVessel(VESSELS[0]!.id), VESSELS[0], 'then a vessel is at hand too');
  t.equal(store.getVessel('no-such-vessel'), undefined);
  t.equal(reads, 1, 'one query for all of it');
});

t.test('a failed read of the survey is not kept: the next call reads again', async (t) => {
  const db = openSqliteDatabase({ path: SQLITE_MEMORY });
  t.teardown(() => db.close());
  await applyMigrations(db, MAPPING_MIGRATIONS);
  let fail = true;
  const flaky: Database = {
    ...db,
    query: (sql, params) => (fail ? Promise.reject(new Error('store down')) : db.query(sql, params)),
  };
  const store = createSqlMappingStore(flaky);
  await t.rejects(Promise.resolve(store.listHazards()), /store down/);
  fail = false;
  const hazards = await store.listHazards();
  t.ok(hazards.length > 0, 'read on the next call');
  t.equal(store.listHazards(), hazards, 'and kept from then on');
});
