import t from 'tap';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startTestSystem } from '../app/test-system.ts';
import { compressedRepresentation } from './reference-representation.ts';
import { createSwaggerUiAssets, sharedSwaggerUiAssets } from './swagger-ui-assets.ts';

/** A gzip the test finishes by hand: it counts its calls, and nothing it compresses is ready until `finish`. */
function heldGzip() {
  const calls: Buffer[] = [];
  let finish!: () => void;
  let wasCalled!: () => void;
  const released = new Promise<void>((resolve) => (finish = resolve));
  const called = new Promise<void>((resolve) => (wasCalled = resolve));
  const gzip = async (bytes: Buffer) => {
    calls.push(bytes);
    wasCalled();
    await released;
    return Buffer.from(`gz:${bytes.length}`);
  };
  return { gzip, calls, called, finish };
}

/** Whether a promise has settled once everything queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/** The body of one GET, asking for gzip. */
function get(base: string, target: string): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    httpRequest({ host: hostname, port, path: target, headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

t.test('an asset is compressed through the asynchronous gzip it is given, once for concurrent first requests', async (t) => {
  const held = heldGzip();
  const assets = createSwaggerUiAssets({ gzip: held.gzip });
  const first = assets.get('swagger-ui-bundle.js')!;
  const second = assets.get('swagger-ui-bundle.js')!;
  t.equal(first, second, 'the second request shares the first one in flight');
  // The file is read, then handed to the gzip: the answer waits for it, the event loop does not.
  await Promise.race([held.called, first]);
  t.equal(held.calls.length, 1, 'handed to the given gzip');
  t.equal(await settled(first), false, 'not ready while the compression runs');
  held.finish();
  const [a, b] = await Promise.all([first, second]);
  t.equal(a, b, 'one representation');
  t.equal(held.calls.length, 1, 'compressed once');
  t.equal(a.gzipped?.toString(), `gz:${a.body.length}`, 'the gzip form is what the given gzip made');
  t.same(assets.stats(), { reads: 1, compressions: 1 });
  t.equal(await assets.get('swagger-ui-bundle.js'), a, 'later requests get the kept one');
  const png = await assets.get('favicon-16x16.png')!;
  t.equal(png.gzipped, undefined, 'PNG is not compressed again');
  t.same(assets.stats(), { reads: 2, compressions: 1 });
  t.equal(assets.get('package.json'), undefined, 'a name off the list is unknown');
});

t.test('a spec or file smaller than a packet is not compressed; a larger one goes through the given gzip', async (t) => {
  const held = heldGzip();
  const small = await compressedRepresentation('x'.repeat(100), 'text/plain', 'no-cache', held.gzip);
  t.equal(small.gzipped, undefined);
  t.equal(held.calls.length, 0);
  held.finish();
  const large = await compressedRepresentation('x'.repeat(5000), 'text/plain', 'no-cache', held.gzip);
  t.equal(large.gzipped?.toString(), 'gz:5000');
  // The default is zlib's own: a real gzip stream.
  const real = await compressedRepresentation('y'.repeat(5000), 'text/plain', 'no-cache');
  t.equal(gunzipSync(real.gzipped!).toString(), 'y'.repeat(5000));
});

t.test('every role of a process serves the Swagger UI files from one cache: read and compressed once in all', async (t) => {
  const shared = sharedSwaggerUiAssets();
  // This file's own process: nothing has asked the shared cache for anything yet.
  t.same(shared.stats(), { reads: 0, compressions: 0 });
  const { system } = await startTestSystem(t);
  // The first requests of every role at once, for the largest file.
  const answers = await Promise.all(ROLE_NAMES.map((role) => get(system.url(role), '/docs/swagger-ui-bundle.js.map')));
  for (const answer of answers) {
    t.equal(answer.status, 200);
    t.equal(answer.encoding, 'gzip');
    t.ok(answer.body.equals(answers[0]!.body), 'the same bytes from every role');
  }
  t.same(shared.stats(), { reads: 1, compressions: 1 }, `${ROLE_NAMES.length} roles asking at once: one read, one compression`);
  await get(system.url('gateway'), '/docs/swagger-ui-bundle.js.map');
  await get(system.url('mapping'), '/docs/swagger-ui-bundle.js.map');
  t.same(shared.stats(), { reads: 1, compressions: 1 }, 'later requests of any role use the kept one');
  // A second system in the same process (as the tests run many) shares it too.
  const second = await startTestSystem(t);
  await get(second.system.url('device'), '/docs/swagger-ui-bundle.js.map');
  t.same(shared.stats(), { reads: 1, compressions: 1 }, 'another system of the process: still one');
});
