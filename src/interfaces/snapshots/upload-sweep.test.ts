// The upload sweeper's cost over time: lapsed uploads are looked for every lease period with one query,
// folders without rows at start and then daily with one query however many folders there are.
import { existsSync } from 'node:fs';
import { mkdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Database } from '../../stores/database.ts';
import { testStore, until } from './test-snapshots-helpers.ts';
import { uploadStore } from './upload-store.ts';
import { createUploadSweeper } from './upload-sweep.ts';

const LEASE_MS = 60_000;
const DAY_MS = 86_400_000;
const OWNER = { id: 'this-process', machine: 'this-machine', pid: 1 };

/** `db`, counting the statements sent through it (a transaction counts once). */
function counted(db: Database) {
  let statements = 0;
  const wrapped: Database = {
    ...db,
    query: (sql, params) => (statements++, db.query(sql, params)),
    execute: (sql, params) => (statements++, db.execute(sql, params)),
    transaction: (work, options) => (statements++, db.transaction(work, options)),
  };
  return { db: wrapped, statements: () => statements };
}

t.test(
  'the folders-without-rows sweep runs at start and daily, one query a pass; the lapsed-upload sweep one query a lease period',
  async (t) => {
    const store = await testStore(t);
    const startSeconds = store.clock.nowMs() / 1000;
    // Five folders of this process's uploads in progress (explained by their rows, never swept), one folder no row explains.
    for (let n = 1; n <= 5; n++) {
      const id = String(100 + n);
      await uploadStore.begin(store.db, {
        id,
        account: 'alice',
        owner: OWNER,
        reservedBytes: 1,
        nowMs: store.clock.nowMs(),
        leaseMs: LEASE_MS,
      });
      await mkdir(join(store.dataDir, id), { recursive: true });
      await utimes(join(store.dataDir, id), startSeconds - 3 * 86_400, startSeconds - 3 * 86_400);
    }
    await mkdir(join(store.dataDir, '900'));
    await utimes(join(store.dataDir, '900'), startSeconds, startSeconds);

    const database = counted(store.db);
    const sweeper = createUploadSweeper({
      db: database.db,
      clock: store.clock,
      timers: store.clock,
      logger: store.logs.logger,
      dataDir: store.dataDir,
      owner: OWNER.id,
      isGone: () => false,
      everyMs: LEASE_MS,
    });
    t.teardown(() => sweeper.stop());
    /** Moves the clock by `ms` (firing the pass due on the way) and waits until that pass has ended (the next one is scheduled). */
    const pass = async (ms: number) => {
      store.clock.advance(ms);
      await until(async () => store.clock.pendingTimers().length === 1 || undefined, 'the sweep pass has ended');
    };

    await sweeper.sweep();
    sweeper.start();
    t.equal(database.statements(), 2, 'at start: the uploads, and the known ids for all six folders');
    for (let period = 1; period <= 10; period++) await pass(LEASE_MS);
    t.equal(database.statements(), 2 + 10, 'ten lease periods later: one query each, none per folder');
    t.ok(existsSync(join(store.dataDir, '900')), 'the row-less folder is younger than a day: kept');

    await pass(DAY_MS - 10 * LEASE_MS); // the first pass due fires when the day is up
    t.equal(database.statements(), 2 + 10 + 2, 'a day after the first: the folders are looked at again, with one query');
    t.notOk(existsSync(join(store.dataDir, '900')), 'and the day-old row-less folder is removed');
    for (let n = 1; n <= 5; n++) t.ok(existsSync(join(store.dataDir, String(100 + n))), `folder ${100 + n}, explained by its row, stays`);
  },
);
