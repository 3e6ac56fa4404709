// Test helpers of the snapshot service: a service on a throwaway store and data dir, multipart bodies
// built byte by byte (whole, cut short, failing), and a bounded wait for the background worker.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFakeClock, type FakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { captureLogs } from '../../lib/test-logger.ts';
import type { Database } from '../../stores/database.ts';
import { JOB_MIGRATIONS } from '../../stores/job-queue.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { healthyFiles } from './engine/test-snapshots.ts';
import { snapshotArchive } from './engine/test-archive.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSnapshotService, type SnapshotRecord, type SnapshotService, type SnapshotServiceOptions } from './snapshot-service.ts';

export const BOUNDARY = '----portolan-test-boundary-7MA4YWxkTrZu0gW';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

export type Part = { name: string; body: string | Buffer; fileName?: string };

/** A whole multipart/form-data body; a part with a `fileName` is a file. */
export function multipart(parts: readonly Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.fileName === undefined ? '' : `; filename="${part.fileName}"`}`;
    const type = part.fileName === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
    chunks.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`),
      Buffer.from(part.body),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

/** The body of one `snapshot` file part. */
export const snapshotBody = (archive: Buffer, fileName = 'device.snapshot.tgz') =>
  multipart([{ name: 'snapshot', body: archive, fileName }]);

/** A request body that delivers `bytes` in chunks of `chunk` bytes, then ends. */
export const bodyOf = (bytes: Buffer, chunk = 64 * 1024) => Readable.from(chunksOf(bytes, chunk), { objectMode: false });

/** A request body that delivers `bytes`, then fails as a request does when its client goes away. */
export function failingBody(bytes: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) return void this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      sent = true;
      this.push(bytes);
    },
  });
}

function* chunksOf(bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** The healthy fixture's archive (every shipped rule misses) with `extra` files added or replaced. */
export const healthyArchive = (extra: Record<string, string | Buffer> = {}) => snapshotArchive({ ...healthyFiles(), ...extra });

/** Waits for I/O (the clock does not move) until `check` holds; fails rather than hang if it never does. */
export async function until<T>(check: () => Promise<T | undefined | false>, what: string): Promise<T> {
  for (let i = 0; i < 2_000; i++) {
    const value = await check();
    if (value) return value;
    await sleep(5);
  }
  throw new Error(`still waiting until ${what}`);
}

/** Waits until no processing job is waiting or running (a job cleans up after it has recorded its outcome). */
export const jobsSettled = (store: TestStore): Promise<true> =>
  until(
    async () => (await store.db.query("SELECT id FROM jobs WHERE state IN ('queued', 'running')")).length === 0 || undefined,
    'every job has ended',
  );

/** Every path under `dir` (empty when it does not exist), sorted. */
export async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true }).catch(() => [] as string[])).sort();
}

export type TestStore = {
  db: Database;
  root: string;
  dataDir: string;
  clock: FakeClock;
  logs: ReturnType<typeof captureLogs>;
  /** Run when the test ends, before the store closes (services stop first, so no job meets a closed store). */
  stops: Array<() => Promise<void>>;
};

/** A fresh store (SQLite in a temp folder, or `url`) and data dir, removed when `t` ends. */
export async function testStore(t: TapTest, url?: string): Promise<TestStore> {
  const root = await mkdtemp(join(tmpdir(), 'portolan-snapshots-'));
  const db = await openDatabase(url ?? `sqlite:${join(root, 'portolan.db')}`, { migrations: [...JOB_MIGRATIONS, ...SNAPSHOT_MIGRATIONS] });
  const store: TestStore = { db, root, dataDir: join(root, 'snapshots'), clock: createFakeClock(), logs: captureLogs(), stops: [] };
  t.teardown(async () => {
    for (const stop of store.stops) await stop();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });
  return store;
}

let owners = 0;

/** A snapshot service on `store`, stopped when the test ends; started unless `start` is false. */
export async function testService(
  store: TestStore,
  options: Partial<SnapshotServiceOptions> & { start?: boolean } = {},
): Promise<SnapshotService> {
  const { start = true, ...overrides } = options;
  const service = createSnapshotService({
    db: store.db,
    clock: store.clock,
    timers: store.clock,
    logger: store.logs.logger,
    dataDir: store.dataDir,
    maxUploadBytes: 64 * 1024 * 1024,
    concurrency: 2,
    leaseMs: 30_000,
    owner: `test-worker-${++owners}`,
    ...overrides,
  });
  store.stops.push(() => service.stop());
  if (start) await service.start();
  return service;
}

/** Uploads `archive` as the `snapshot` file and expects it accepted; the new id. */
export async function uploaded(service: SnapshotService, account: string, archive: Buffer, fileName?: string): Promise<string> {
  const outcome = await service.upload(account, `${account}@example.com`, {
    contentType: MULTIPART,
    stream: bodyOf(snapshotBody(archive, fileName)),
  });
  if (!outcome.ok) throw new Error(`upload refused: ${outcome.error.code} ${outcome.error.message}`);
  return outcome.value.id;
}

/** Waits until the snapshot has left PROCESSING; its record. */
export const processed = (service: SnapshotService, account: string, id: string): Promise<SnapshotRecord> =>
  until(async () => {
    const record = await service.get(account, id);
    return record && record.status !== 'PROCESSING' ? record : undefined;
  }, `snapshot ${id} is processed`);
