// Hostile cases of the snapshot store's disk (interface C): uploads cut off by a killed process, accounts
// that would fill the disk (declared, undeclared and lying lengths, parallel uploads, many snapshots,
// archives that unpack large), and the jobs table that grows with every upload.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { readdir, stat, utimes } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { startTestSystem, tempSqliteUrl } from '../app/test-system.ts';
import { createFakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { withTestPostgres } from '../stores/test-postgres.ts';
import {
  BOUNDARY,
  bodyOf,
  healthyArchive,
  jobsSettled,
  MULTIPART,
  processed,
  snapshotBody,
  testService,
  testStore,
  tree,
  until,
  uploaded,
  type TestStore,
} from '../interfaces/snapshots/test-snapshots-helpers.ts';
import type { SnapshotService, UploadOutcome } from '../interfaces/snapshots/snapshot-service.ts';
import { statusOf } from '../lib/errors.ts';
import type { Database } from '../stores/database.ts';

const main = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const MiB = 1024 * 1024;

/** The head of a multipart body whose `snapshot` file follows; the tail closes it. */
const HEAD = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="snapshot"; filename="s.tgz"\r\nContent-Type: application/octet-stream\r\n\r\n`,
);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** A body that sends the head and `bytes` of file now, and the rest (more file and the tail) when `finish` is called. */
function heldBody(bytes: number) {
  const stream = new PassThrough();
  stream.write(Buffer.concat([HEAD, Buffer.alloc(bytes, 5)]));
  return { stream, finish: (more = 0) => stream.end(Buffer.concat([Buffer.alloc(more, 5), TAIL])) };
}

const uploadRows = async (store: TestStore) =>
  store.db.query<{ id: string; account: string }>('SELECT id, account FROM snapshot_uploads ORDER BY id');

/** Waits until the upload's file is on disk with some bytes (the upload is under way, not just admitted). */
const arriving = (dataDir: string) =>
  until(async () => {
    for (const entry of await readdir(dataDir).catch(() => [] as string[])) {
      const size = await stat(join(dataDir, entry, 'upload.tgz')).then(
        (s) => s.size,
        () => 0,
      );
      if (size > 0) return entry;
    }
    return undefined;
  }, 'an upload is arriving on disk');

// ---- partial uploads ----

type Child = { child: ChildProcess; diagnostics: string; login: string };

async function startChild(t: TapTest, database: string, dataDir: string): Promise<Child> {
  const env = {
    ...process.env,
    PORTOLAN_ROLES: 'diagnostics,login',
    PORTOLAN_DIAGNOSTICS_PORT: '0',
    PORTOLAN_LOGIN_PORT: '0',
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_DATABASE: database,
    PORTOLAN_SNAPSHOT_DATA_DIR: dataDir,
    PORTOLAN_ADMIN_PASSWORD: 'storage admin pw',
    // The default minute: the restart below must not need it to lapse.
    PORTOLAN_SNAPSHOT_LEASE_MS: '60000',
  };
  const child = spawn(process.execPath, [main, 'start'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  // The URLs are printed once every role's start (and so the upload sweep) is done.
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`the system exited early:\n${out}`);
    return /diagnostics\s+http:\/\/\S+/.test(out) && /login\s+http:\/\/\S+/.test(out);
  }, 'the child system prints its URLs');
  return { child, diagnostics: /diagnostics\s+(http:\/\/\S+)/.exec(out)![1]!, login: /login\s+(http:\/\/\S+)/.exec(out)![1]! };
}

async function loginCookies(system: { login: string }, password = 'storage admin pw'): Promise<string> {
  const answer = await fetch(`${system.login}/resource/loginAction.jsp`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ userid: 'admin', passwd: password }),
  });
  await answer.arrayBuffer();
  return answer.headers
    .getSetCookie()
    .map((line) => line.split(';', 1)[0])
    .join('; ');
}

t.test(
  'C-partial-upload-killed-process: a process killed with SIGKILL mid-upload leaves nothing once it is started again, at once',
  async (t) => {
    const { url: database, dir } = tempSqliteUrl(t);
    const dataDir = join(dir, 'snapshots');
    const first = await startChild(t, database, dataDir);
    const cookie = await loginCookies(first);
    // A chunked upload (no Content-Length) that sends 1 MiB of its file and then waits.
    const sending = request(`${first.diagnostics}/snapshot-analyzer/api/snapshots`, {
      method: 'POST',
      headers: { cookie, 'content-type': MULTIPART, accept: JSON_TYPE },
    });
    sending.on('error', () => undefined); // the server dies under it
    sending.write(Buffer.concat([HEAD, Buffer.alloc(MiB, 5)]));
    const id = await arriving(dataDir);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    sending.destroy();
    t.ok(existsSync(join(dataDir, id, 'upload.tgz')), 'the partial upload is on disk after the kill');

    const second = await startChild(t, database, dataDir);
    t.same(await tree(dataDir), [], 'nothing of it is left once the restart serves');
    const db = new DatabaseSync(database.slice('sqlite:'.length), { readOnly: true });
    t.same(db.prepare('SELECT id FROM snapshot_uploads').all(), [], 'its upload row (and its reservation) is gone');
    db.close();
    const list = await fetch(`${second.diagnostics}/snapshot-analyzer/api/snapshots`, {
      headers: { cookie: await loginCookies(second), accept: JSON_TYPE },
    });
    t.same(await list.json(), { id: ['0'] }, 'and it never became a snapshot');
    second.child.kill('SIGKILL');
  },
);

t.test(
  'C-partial-upload-lapsed-lease: an upload whose owner stopped renewing its lease (killed on another machine) is removed by the next start',
  async (t) => {
    const store = await testStore(t);
    const frozen = createFakeClock(); // the owner's timers never fire again: it renews nothing, as if it were gone
    const owner = await testService(store, { clock: frozen, timers: frozen, concurrency: 0, leaseMs: 30_000 });
    const body = heldBody(256 * 1024);
    const upload = owner.upload('alice', 'alice', { contentType: MULTIPART, stream: body.stream });
    const id = await arriving(store.dataDir);

    store.clock.advance(30_001); // the other process's clock: the lease has lapsed there
    await testService(store, { concurrency: 0 });
    t.notOk(existsSync(join(store.dataDir, id)), 'its folder is removed by the start');
    t.same(await uploadRows(store), [], 'its row too');

    body.finish();
    await t.rejects(
      upload,
      { name: 'UploadLost' },
      'the owner, had it lived on, would have found its upload taken: a fault, never a half snapshot',
    );
    t.same(await tree(store.dataDir), []);
    t.same(await owner.list('alice'), ['0']);
  },
);

t.test(
  'C-partial-upload-live-kept: an upload another live process is receiving is never removed, however long it has been arriving',
  async (t) => {
    const store = await testStore(t);
    const receiving = await testService(store, { concurrency: 0, leaseMs: 30_000 }); // renews on the shared clock
    const body = heldBody(256 * 1024);
    const upload = receiving.upload('alice', 'alice', { contentType: MULTIPART, stream: body.stream });
    const id = await arriving(store.dataDir);
    // Two days of a slow link (PORTOLAN_REQUEST_TIMEOUT_MS=0 allows it): the lease is renewed all along.
    for (let i = 0; i < 20; i++) await store.clock.advanceAsync(10_000);
    store.clock.advance(2 * 86_400_000);
    const old = store.clock.nowMs() / 1000 - 2 * 86_400;
    await utimes(join(store.dataDir, id), old, old);
    await store.clock.advanceAsync(10_000); // one renewal after the jump

    const other = await testService(store, { concurrency: 0, leaseMs: 30_000 });
    await store.clock.advanceAsync(30_000); // and the other's periodic sweep runs once more
    t.ok(existsSync(join(store.dataDir, id, 'upload.tgz')), 'the live upload is kept by the other process');
    body.finish(1024);
    t.same(await upload, { ok: true, value: { id } }, 'and is accepted when it ends');
    t.same(await other.list('alice'), ['0', id]);
    t.same(await uploadRows(store), []);
  },
);

// ---- quotas ----

const quotaService = (store: TestStore, bytes: number, snapshots = 1000, extra: Parameters<typeof testService>[1] = {}) =>
  testService(store, { start: false, accountLimits: { bytes, snapshots }, ...extra });

/** A body that counts what was read of it: `bytes` of file in 64 KiB chunks. */
function countedBody(bytes: number) {
  const whole = Buffer.concat([HEAD, Buffer.alloc(bytes, 9), TAIL]);
  let read = 0;
  const stream = Readable.from(
    (function* () {
      for (let at = 0; at < whole.length; at += 64 * 1024) {
        const chunk = whole.subarray(at, at + 64 * 1024);
        read += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  return { stream, length: whole.length, read: () => read };
}

/** Refused by the account's quota: a registry failure the API answers 507. */
const refusedWith507 = (t: TapTest, outcome: UploadOutcome, message: RegExp) => {
  t.match(outcome, { ok: false, error: { code: 'snapshotQuotaExceeded', message } }, 'refused by the quota');
  t.equal(!outcome.ok && statusOf(outcome.error), 507, 'refused 507');
};

t.test(
  'C-quota-declared-length: a Content-Length that cannot fit in what the account has left is 507 before a byte is read; another account is not affected',
  async (t) => {
    const store = await testStore(t);
    const service = await quotaService(store, 3 * MiB);
    const first = await service.upload('alice', 'alice', {
      contentType: MULTIPART,
      stream: bodyOf(snapshotBody(Buffer.alloc(2 * MiB, 1))),
    });
    t.equal(first.ok, true, 'two of three MiB used');
    const body = countedBody(2 * MiB);
    const outcome = await service.upload('alice', 'alice', {
      contentType: MULTIPART,
      stream: body.stream,
      contentLength: String(body.length),
    });
    refusedWith507(
      t,
      outcome,
      /^The snapshot does not fit in the account's storage quota of 3145728 bytes \(\d+ in use\); delete snapshots to make room\.$/,
    );
    t.equal(body.read(), 0, 'nothing of the body was read');
    t.same(await uploadRows(store), [], 'no reservation is left');
    t.equal((await tree(store.dataDir)).length, 2, 'only the first snapshot is on disk');
    t.equal(
      (await service.upload('bob', 'bob', { contentType: MULTIPART, stream: bodyOf(snapshotBody(Buffer.alloc(2 * MiB, 1))) })).ok,
      true,
      'bob has his own quota',
    );
  },
);

t.test(
  'C-quota-chunked-stream: an upload with no Content-Length is 507 as soon as its file grows past what is left, and nothing is kept',
  async (t) => {
    const store = await testStore(t);
    const service = await quotaService(store, 1 * MiB);
    // 2 MiB of file sent, and the body never ends: the answer cannot wait for its end.
    const body = heldBody(2 * MiB);
    const outcome = await service.upload('alice', 'alice', { contentType: MULTIPART, stream: body.stream });
    refusedWith507(t, outcome, /storage quota of 1048576 bytes \(0 in use\)/);
    t.notOk(body.stream.writableEnded, 'refused while the body was still arriving');
    t.same(await tree(store.dataDir), []);
    t.same(await uploadRows(store), []);
    t.same(await service.list('alice'), ['0'], 'the sample 0 is not the account’s and does not count');
  },
);

t.test(
  'C-quota-lying-length: a Content-Length that claims less than the body carries gains nothing: the file is held to what is left',
  async (t) => {
    const store = await testStore(t);
    const service = await quotaService(store, 2 * MiB);
    const body = countedBody(6 * MiB);
    const outcome = await service.upload('alice', 'alice', { contentType: MULTIPART, stream: body.stream, contentLength: '1000' });
    refusedWith507(t, outcome, /storage quota of 2097152 bytes/);
    t.same(await tree(store.dataDir), []);
    t.same(await uploadRows(store), []);
  },
);

async function parallelRace(t: TapTest, url?: string) {
  const store = await testStore(t, url);
  // Two processes on one store: reservations of one account are serialised by the store, not in memory.
  const services = [await quotaService(store, 5 * MiB + 512 * 1024), await quotaService(store, 5 * MiB + 512 * 1024)];
  const outcomes = await Promise.all(
    Array.from({ length: 16 }, (_, i) => {
      const body = snapshotBody(Buffer.alloc(MiB, i));
      // Half declare their length, half are chunked.
      return services[i % 2]!.upload('alice', 'alice', {
        contentType: MULTIPART,
        stream: bodyOf(body, 32 * 1024),
        ...(i % 4 < 2 ? { contentLength: String(body.length) } : {}),
      });
    }),
  );
  const accepted = outcomes.filter((o) => o.ok);
  t.equal(accepted.length, 5, 'exactly as many as fit were accepted');
  t.ok(
    outcomes.every((o) => o.ok || (o.error.code === 'snapshotQuotaExceeded' && statusOf(o.error) === 507)),
    'every other one is refused by the quota, 507',
  );
  const [usage] = await store.db.query<{ bytes: number | string }>("SELECT SUM(file_size) AS bytes FROM snapshots WHERE account = 'alice'");
  t.ok(Number(usage!.bytes) <= 5 * MiB + 512 * 1024, `together within the quota (${usage!.bytes} bytes)`);
  t.equal((await tree(store.dataDir)).length, 10, 'only the accepted ones are on disk (a folder and its file each)');
  t.same(await uploadRows(store), [], 'no reservation is left');
}

t.test('C-quota-parallel-race: sixteen parallel uploads of one account on two services cannot together pass its quota (SQLite)', (t) =>
  parallelRace(t),
);

t.test('C-quota-parallel-race-postgres: the same race on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await parallelRace(t, url);
});

t.test(
  'C-quota-snapshot-count: an account at its number of snapshots (uploads in progress included) is 507 until it deletes one',
  async (t) => {
    const store = await testStore(t);
    const service = await quotaService(store, 1024 * MiB, 3);
    const archive = healthyArchive();
    const first = await uploaded(service, 'alice', archive);
    await uploaded(service, 'alice', archive);
    const held = heldBody(1024);
    const inProgress = service.upload('alice', 'alice', { contentType: MULTIPART, stream: held.stream });
    await until(async () => (await uploadRows(store)).length === 1, 'the third upload is in progress');
    const fourth = await service.upload('alice', 'alice', { contentType: MULTIPART, stream: bodyOf(snapshotBody(archive)) });
    refusedWith507(t, fourth, /^The account holds 3 snapshots, its limit; delete snapshots to upload more\.$/);
    held.finish();
    t.equal((await inProgress).ok, true, 'the upload in progress had its place');
    t.equal(await service.remove('alice', first), 'deleted');
    t.equal(
      (await service.upload('alice', 'alice', { contentType: MULTIPART, stream: bodyOf(snapshotBody(archive)) })).ok,
      true,
      'room again after a delete',
    );
  },
);

t.test('C-quota-unpacked-size: a small archive that unpacks past the account quota ends ERROR and its files are removed', async (t) => {
  const store = await testStore(t);
  // 3 MiB of zeros pack to a few KiB: within the quota as an upload, not once unpacked.
  const archive = healthyArchive({ 'var/log/padding.log': Buffer.alloc(3 * MiB) });
  t.ok(archive.length < 256 * 1024, `the archive is small (${archive.length} bytes)`);
  const service = await quotaService(store, 2 * MiB, 1000, { start: true });
  const id = await uploaded(service, 'alice', archive);
  await processed(service, 'alice', id);
  t.match(await service.get('alice', id), {
    status: 'ERROR',
    messages: [
      /^The unpacked snapshot \(\d+ bytes\) does not fit in the account's storage quota of 2097152 bytes \(0 in use by its other snapshots\); delete snapshots and upload it again\.$/,
    ],
  });
  await jobsSettled(store);
  t.same(await tree(store.dataDir), [], 'nothing of it stays on disk');
  await service.stop();
  const roomy = await testService(store, { accountLimits: { bytes: 64 * MiB, snapshots: 1000 } });
  const kept = await uploaded(roomy, 'bob', archive);
  await processed(roomy, 'bob', kept);
  await jobsSettled(store);
  t.equal((await roomy.get('bob', kept))?.status, 'COMPLETE', 'where it fits it is kept');
  const [row] = await store.db.query<{ stored_bytes: number | string }>('SELECT stored_bytes FROM snapshots WHERE id = $1', [kept]);
  t.ok(Number(row!.stored_bytes) >= 3 * MiB, `and its unpacked size counts (${row!.stored_bytes} bytes)`);
});

/**
 * The committed status of every snapshot after each write `db` makes (each statement outside a transaction,
 * each transaction once it commits): what any reader could have seen, in order, per snapshot id.
 */
function statusesSeen(db: Database) {
  const seen = new Map<string, string[]>();
  const look = async () => {
    for (const row of await db.query<{ id: string; status: string }>('SELECT id, status FROM snapshots')) {
      const statuses = seen.get(row.id) ?? [];
      if (statuses.at(-1) !== row.status) seen.set(row.id, [...statuses, row.status]);
    }
  };
  const watched: Database = {
    engine: db.engine,
    query: (sql, params) => db.query(sql, params),
    execute: async (sql, params) => {
      const result = await db.execute(sql, params);
      await look();
      return result;
    },
    executeScript: (sql) => db.executeScript(sql),
    transaction: async (work, options) => {
      const result = await db.transaction(work, options);
      await look();
      return result;
    },
    ping: (timeoutMs) => db.ping(timeoutMs),
    close: () => db.close(),
  };
  return { db: watched, of: (id: string) => seen.get(id) ?? [] };
}

t.test(
  'C-quota-never-complete-then-error: a snapshot whose unpacked files do not fit is never COMPLETE for any reader before it ends ERROR',
  async (t) => {
    const store = await testStore(t);
    const statuses = statusesSeen(store.db);
    const archive = healthyArchive({ 'var/log/padding.log': Buffer.alloc(3 * MiB) });
    const service = await quotaService(store, 2 * MiB, 1000, { start: true, db: statuses.db });
    const id = await uploaded(service, 'alice', archive);
    t.equal((await processed(service, 'alice', id)).status, 'ERROR');
    await jobsSettled(store);
    t.same(statuses.of(id), ['PROCESSING', 'ERROR'], 'every committed state of the snapshot, in order: never COMPLETE');
    t.same(await tree(store.dataDir), [], 'nothing of it stays on disk');
  },
);

t.test(
  'C-quota-http-answer: over HTTP the refusal is 507 in the API error shape (XML or JSON), nothing of the request repeated',
  async (t) => {
    const { system } = await startTestSystem(t, { config: { adminPassword: 'quota http pw', snapshotAccountQuotaBytes: 64 * 1024 } });
    const cookie = await loginCookies({ login: system.url('login') }, 'quota http pw');
    const url = `${system.url('diagnostics')}/snapshot-analyzer/api/snapshots`;
    const body = snapshotBody(Buffer.alloc(200 * 1024, 3), 'secret-name.tgz');
    for (const accept of [JSON_TYPE, undefined]) {
      const answer = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': MULTIPART, ...(accept ? { accept } : {}) },
        body: new Uint8Array(body),
      });
      t.equal(answer.status, 507);
      const text = await answer.text();
      const message = "The snapshot does not fit in the account's storage quota of 65536 bytes (0 in use); delete snapshots to make room.";
      if (accept) t.same(JSON.parse(text), { code: 507, message });
      else t.match(text, /^<error><code>507<\/code><message>The snapshot does not fit in the account/);
      t.notMatch(text, /secret-name/);
    }
  },
);

// ---- a full disk ----

/** A file on disk that takes `room` bytes, then fails every write as a full file system does (ENOSPC). */
const fullDiskAfter = (room: number) => (path: string) => {
  const file = createWriteStream(path, { flags: 'wx' });
  let written = 0;
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.length;
      if (written <= room) return void file.write(chunk, done);
      done(Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', errno: -28, syscall: 'write' }));
    },
    final: (done) => void file.end(done),
    destroy: (error, done) => {
      file.destroy();
      file.once('close', () => done(error));
    },
  });
};

t.test(
  'C-disk-full-upload: a disk that fills up while an upload is stored is 507 in the API error shape, and nothing of the upload is kept',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store, { openUploadFile: fullDiskAfter(256 * 1024) });
    const outcome = await service.upload('alice', 'alice', {
      contentType: MULTIPART,
      stream: bodyOf(snapshotBody(Buffer.alloc(MiB, 7), 'secret-name.tgz')),
    });
    t.match(outcome, {
      ok: false,
      error: {
        code: 'insufficientStorage',
        message: /^The server has no disk space left for the snapshot; nothing of it was kept\. Try again later\.$/,
      },
    });
    t.equal(!outcome.ok && statusOf(outcome.error), 507, 'refused 507');
    t.same(await tree(store.dataDir), [], 'nothing on disk');
    t.same(await uploadRows(store), [], 'no reservation left');
    t.same(await service.list('alice'), ['0']);
    const roomy = await testService(store);
    t.equal(
      (await roomy.upload('alice', 'alice', { contentType: MULTIPART, stream: bodyOf(snapshotBody(healthyArchive())) })).ok,
      true,
      'room again: the next upload is taken',
    );
  },
);

// ---- retention of finished jobs ----

t.test(
  'C-job-retention: finished processing jobs are purged after the retention period on the injected clock; younger ones stay',
  async (t) => {
    const store = await testStore(t);
    const service: SnapshotService = await testService(store, { jobRetentionMs: 7 * 86_400_000 });
    const done = async () => (await store.db.query("SELECT id FROM jobs WHERE state = 'done'")).length;
    const first = await uploaded(service, 'alice', healthyArchive());
    await processed(service, 'alice', first);
    await jobsSettled(store);
    // In one leap (each timer due fires once): the daily purge runs, a week has not passed for any job.
    store.clock.advance(6 * 86_400_000);
    const second = await uploaded(service, 'alice', healthyArchive());
    await processed(service, 'alice', second);
    await jobsSettled(store);
    t.equal(await done(), 2, 'six days on, nothing is purged');
    store.clock.advance(86_400_000);
    await until(async () => (await done()) === 1 || undefined, 'the week-old job is purged');
    const [left] = await store.db.query<{ payload: string }>("SELECT payload FROM jobs WHERE state = 'done'");
    t.same(JSON.parse(left!.payload), { id: second }, 'the younger job stays');
  },
);
