// Uploads through the snapshot service: streamed to disk, refused with 400 or 413 and nothing kept.
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { SAMPLE_ID } from './sample.ts';
import {
  bodyOf,
  failingBody,
  healthyArchive,
  multipart,
  MULTIPART,
  snapshotBody,
  testService,
  testStore,
  tree,
  until,
} from './test-snapshots-helpers.ts';
import { statusOf } from '../../lib/errors.ts';
import { fileNameOf } from './upload.ts';

// Refusals are registry failures: malformedBody and invalidRequest answer 400, payloadTooLarge 413.
const MALFORMED = { ok: false, error: { code: 'malformedBody', message: 'The request body is not a valid multipart/form-data body.' } };
const MISSING = { ok: false, error: { code: 'invalidRequest', message: 'The multipart file field snapshot is required.' } };
const UNEXPECTED = {
  ok: false,
  error: { code: 'invalidRequest', message: 'The multipart form may hold only one part, the file field snapshot.' },
};

t.test('an upload streams the file to the new snapshot folder and saves it PROCESSING', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false }); // no worker: the upload's own outcome is seen
  const archive = healthyArchive();
  const outcome = await service.upload('alice', 'alice@example.com', {
    contentType: MULTIPART,
    stream: bodyOf(snapshotBody(archive, 'lb1-20260101.tgz'), 1000),
  });
  t.same(outcome, { ok: true, value: { id: '1' } });
  t.same(await tree(store.dataDir), ['1', '1/upload.tgz']);
  t.equal((await stat(join(store.dataDir, '1', 'upload.tgz'))).size, archive.length, 'the whole file, byte for byte');
  const record = await service.get('alice', '1');
  t.match(record, {
    id: '1',
    account: 'alice',
    status: 'PROCESSING',
    fileName: 'lb1-20260101.tgz',
    fileSize: archive.length,
    uploadedBy: 'alice@example.com',
    uploadedAtMs: store.clock.nowMs(),
    messages: [],
    description: '',
    visibleInGui: true,
  });
  t.equal(record?.rulesVersion, undefined);
});

t.test('a file one byte over the limit is 413 and nothing of it is kept; a file at the limit is accepted', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false, maxUploadBytes: 10_000 });
  const over = await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(snapshotBody(Buffer.alloc(10_001, 7)), 512) });
  t.same(over, { ok: false, error: { code: 'payloadTooLarge', message: 'The snapshot exceeds the upload limit of 10000 bytes.' } });
  t.equal(!over.ok && statusOf(over.error), 413);
  t.same(await tree(store.dataDir), [], 'no folder, no partial file');
  t.same(await service.list('alice'), [SAMPLE_ID], 'no row');

  const far = await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(snapshotBody(Buffer.alloc(5_000_000, 7))) });
  t.equal(far.ok === false && statusOf(far.error), 413, 'far over the limit too');
  t.same(await tree(store.dataDir), []);

  const at = await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(snapshotBody(Buffer.alloc(10_000, 7))) });
  t.equal(at.ok, true, 'exactly the limit is within it');
  if (at.ok) t.equal((await service.get('alice', at.value.id))?.fileSize, 10_000);
});

t.test('a body that ends in the middle of the file is 400 and nothing is kept', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const whole = snapshotBody(healthyArchive());
  const outcome = await service.upload('alice', 'a', {
    contentType: MULTIPART,
    stream: bodyOf(whole.subarray(0, whole.length - 300), 256),
  });
  t.same(outcome, MALFORMED);
  t.same(await tree(store.dataDir), []);
  t.same(await service.list('alice'), [SAMPLE_ID]);
});

t.test('a body with a part that is not ours is 400 at that part, even cut short; nothing is kept', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const whole = multipart([{ name: 'archive', body: Buffer.alloc(100_000, 2), fileName: 'other.tgz' }]);
  t.same(await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(whole.subarray(0, 50_000), 4096) }), UNEXPECTED);
  t.same(await tree(store.dataDir), []);
});

t.test('a body whose stream fails (the client went away) is 400 and nothing is kept', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const whole = snapshotBody(Buffer.alloc(200_000, 1));
  t.same(await service.upload('alice', 'a', { contentType: MULTIPART, stream: failingBody(whole.subarray(0, 150_000)) }), MALFORMED);
  t.same(await tree(store.dataDir), []);

  // A stream destroyed without an error (it closes, it never ends).
  const closing = new Readable({ read() {} });
  closing.push(whole.subarray(0, 100_000));
  setImmediate(() => closing.destroy());
  t.same(await service.upload('alice', 'a', { contentType: MULTIPART, stream: closing }), MALFORMED);
  t.same(await tree(store.dataDir), []);
  t.same(await service.list('alice'), [SAMPLE_ID]);
});

t.test('malformed bodies are 400: not multipart, no boundary, a broken part header, garbage', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const body = () => bodyOf(snapshotBody(Buffer.from('x')));
  t.same(await service.upload('alice', 'a', { contentType: undefined, stream: body() }), MALFORMED);
  t.same(await service.upload('alice', 'a', { contentType: 'application/octet-stream', stream: body() }), MALFORMED);
  t.same(await service.upload('alice', 'a', { contentType: 'multipart/form-data', stream: body() }), MALFORMED, 'no boundary');
  t.same(
    await service.upload('alice', 'a', { contentType: 'multipart/form-data; boundary=', stream: body() }),
    MALFORMED,
    'an empty boundary',
  );
  const brokenHeader = Buffer.from(`--${MULTIPART.split('=')[1]}\r\nContent-Disposition form-data no colon\r\n\r\nxyz\r\n`);
  t.same(await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(brokenHeader) }), MALFORMED);
  t.same(
    await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(Buffer.from('not a multipart body at all')) }),
    MALFORMED,
  );
  t.same(await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(Buffer.alloc(0)) }), MALFORMED, 'an empty body');
  t.same(await tree(store.dataDir), []);
});

t.test(
  'a form that is not exactly one snapshot file is 400 and nothing is kept: no parts, a text field, another file, extra parts',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store, { start: false });
    const upload = (body: Buffer) => service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(body, 4096) });
    t.same(await upload(multipart([])), MISSING);
    t.same(await upload(multipart([{ name: 'snapshot', body: 'just text' }])), UNEXPECTED, 'a text field, even named snapshot');
    t.same(await upload(multipart([{ name: 'archive', body: 'bytes', fileName: 'a.tgz' }])), UNEXPECTED);
    t.same(
      await upload(
        multipart([
          { name: 'archive', body: 'bytes', fileName: 'a.tgz' },
          { name: 'snapshot', body: 'late', fileName: 'b.tgz' },
        ]),
      ),
      UNEXPECTED,
    );
    t.same(
      await upload(
        multipart([
          { name: 'description', body: 'before the upgrade' },
          { name: 'snapshot', body: 'THE SNAPSHOT', fileName: 'one.tgz' },
        ]),
      ),
      UNEXPECTED,
      'a field before the file',
    );
    t.same(
      await upload(
        multipart([
          { name: 'snapshot', body: 'THE SNAPSHOT', fileName: 'one.tgz' },
          { name: 'snapshot', body: Buffer.alloc(300_000, 9), fileName: 'two.tgz' },
        ]),
      ),
      UNEXPECTED,
      'a second snapshot file',
    );
    t.same(await tree(store.dataDir), []);
  },
);

t.test('each upload is a new snapshot, even of the same bytes; ids increase', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const body = snapshotBody(healthyArchive());
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const outcome = await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(body) });
    if (outcome.ok) ids.push(outcome.value.id);
  }
  t.same(ids, ['1', '2', '3']);
  t.same(await service.list('alice'), [SAMPLE_ID, '1', '2', '3']);
  // Refused uploads leave gaps, never reuse: the next id is still new.
  await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(multipart([])) });
  const next = await service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(body) });
  t.ok(next.ok && Number(next.value.id) > 3, 'a later id');
});

t.test('uploads at once on one store get distinct ids', async (t) => {
  const store = await testStore(t);
  const one = await testService(store, { start: false });
  const two = await testService(store, { start: false });
  const body = snapshotBody(Buffer.alloc(100_000, 3));
  const outcomes = await Promise.all(
    Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(body, 8192) })),
  );
  const ids = outcomes.map((o) => (o.ok ? o.value.id : 'refused'));
  t.same(
    [...ids].sort((a, b) => Number(a) - Number(b)),
    ['1', '2', '3', '4', '5', '6', '7', '8'],
  );
});

t.test('the upload never holds the file in memory: it is on disk while the body still arrives', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const total = 20 * 1024 * 1024;
  const chunk = 64 * 1024;
  const head = Buffer.from(
    `--${MULTIPART.split('=')[1]}\r\nContent-Disposition: form-data; name="snapshot"; filename="big.tgz"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${MULTIPART.split('=')[1]}--\r\n`);
  const onDisk = async () => {
    const folders = await readdir(store.dataDir).catch(() => [] as string[]);
    return folders.length === 1 ? ((await stat(join(store.dataDir, folders[0]!, 'upload.tgz')).catch(() => undefined))?.size ?? 0) : 0;
  };
  // A counting source: it makes each chunk only when asked, and notes how far the disk lags behind it.
  let produced = 0;
  let maxLag = 0;
  let onDiskAtLastChunk = -1;
  const source = new Readable({
    // One push per call, at its end: the stream asks for the next chunk only after it.
    async read() {
      if (produced >= total) {
        this.push(tail);
        this.push(null);
        return;
      }
      produced += chunk;
      if (produced % (16 * chunk) === 0) maxLag = Math.max(maxLag, produced - (await onDisk()));
      if (produced >= total) onDiskAtLastChunk = await onDisk();
      this.push(Buffer.alloc(chunk, produced % 251));
    },
  });
  source.push(head);
  const outcome = await service.upload('alice', 'a', { contentType: MULTIPART, stream: source });
  t.same(outcome, { ok: true, value: { id: '1' } });
  t.equal(await onDisk(), total);
  t.ok(
    onDiskAtLastChunk > total - 4 * 1024 * 1024,
    `before the last chunk was even made, ${onDiskAtLastChunk} of ${total} bytes were on disk`,
  );
  t.ok(maxLag < 4 * 1024 * 1024, `the disk was never more than ${maxLag} bytes behind the body (at most 4 MiB)`);
});

t.test('a data dir that cannot be written is a fault of the server: the upload rejects and nothing is saved', async (t) => {
  const store = await testStore(t);
  await writeFile(store.dataDir, 'a file where the data dir should be');
  const service = await testService(store, { start: false });
  await t.rejects(service.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(snapshotBody(healthyArchive())) }), {
    code: 'EEXIST',
  });
  t.same(await service.list('alice'), [SAMPLE_ID]);
});

t.test('the file name is the base name, without control characters, at most 255 characters', async (t) => {
  t.equal(fileNameOf('C:\\Users\\me\\lb1.tgz'), 'lb1.tgz');
  t.equal(fileNameOf('../../etc/passwd'), 'passwd');
  t.equal(fileNameOf('lb1\u0000\u001b[2J.tgz'), 'lb1[2J.tgz');
  t.equal(fileNameOf('x'.repeat(400)).length, 255);
  t.equal(fileNameOf(undefined), 'snapshot');
  t.equal(fileNameOf('   '), 'snapshot');
});

t.test('an upload accepted by one service is processed by a started one (the job is durable)', async (t) => {
  const store = await testStore(t);
  const stopped = await testService(store, { start: false });
  const body = snapshotBody(healthyArchive());
  const outcome = await stopped.upload('alice', 'a', { contentType: MULTIPART, stream: bodyOf(body) });
  await stopped.stop();
  t.ok(outcome.ok);
  const restarted = await testService(store);
  const record = await until(async () => {
    const r = await restarted.get('alice', '1');
    return r?.status === 'COMPLETE' ? r : undefined;
  }, 'the restarted service has processed it');
  t.equal(record.hostname, 'device-1.example.net');
});
