// The proxy's upstream timeout on a fake clock: exact to the millisecond, whatever the machine's speed.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { hasSettled } from '../lib/clock.ts';

/** What `promise` has settled with by now, or undefined while it is pending. */
const settledWith = async <T>(promise: Promise<T>): Promise<T | undefined> => ((await hasSettled(promise)) ? await promise : undefined);
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { loadSpec } from '../lib/spec-catalog.ts';
import { send } from './test-clients.ts';
import { startProxiedGateway as gatewayFor, startRawServer, waitFor } from './test-servers.ts';

const validateGatewayError = createSpecValidator(loadSpec('rate-limit')).at('/components/schemas/GatewayError');

t.test('504 when the member sends no response headers within the upstream timeout, and not before', async (t) => {
  let head = '';
  const hung = await startRawServer(t, (socket) => socket.on('data', (chunk) => (head += chunk))); // reads, never answers
  const gateway = await gatewayFor(t, [hung], { upstreamTimeoutMs: 30_000 });
  const answering = send(gateway.port, { path: '/api/charts' });
  t.ok(await waitFor(() => head.includes('\r\n\r\n')), 'the member has the request');
  await gateway.clock.advanceAsync(29_999);
  t.notOk(await hasSettled(answering), 'no answer 1 ms before the timeout');
  t.same(gateway.clock.pendingTimers(), [1], 'the upstream timer has 1 ms to go');
  await gateway.clock.advanceAsync(1);
  const answer = await answering;
  t.equal(answer.status, 504);
  const body = JSON.parse(answer.body.toString());
  t.same(body, { error: 'gateway timeout', 'error-message': `pool member 127.0.0.1:${hung.port} did not answer within 30000 ms` });
  t.ok(validateGatewayError(body), 'GatewayError of specs/rate-limit.yaml');
  t.ok(await waitFor(() => hung.sockets.size === 0), 'the connection to the hung member is closed');
});

t.test('a member that stops sending mid-answer is cut off after the upstream timeout, and not before', async (t) => {
  const stalling = await startRawServer(t, (socket) => {
    socket.once('data', () =>
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(100)}`),
    );
  });
  const gateway = await gatewayFor(t, [stalling], { upstreamTimeoutMs: 30_000 });
  let bytes = 0;
  let outcome: string | undefined;
  const req = httpRequest({ host: '127.0.0.1', port: gateway.port, path: '/stalls', agent: false }, (res) => {
    res.on('data', (chunk: Buffer) => (bytes += chunk.length));
    res.on('error', (error) => (outcome ??= `cut (${error.message})`));
    res.on('end', () => (outcome ??= 'complete'));
  });
  req.on('error', (error) => (outcome ??= `cut (${error.message})`));
  req.end();
  t.ok(await waitFor(() => bytes === 100), 'the first 100 bytes reach the client');
  await gateway.clock.advanceAsync(29_999);
  t.same(gateway.clock.pendingTimers(), [1], 'the upstream timer has 1 ms to go');
  t.equal(outcome, undefined, 'the answer is still open');
  await gateway.clock.advanceAsync(1);
  t.ok(await waitFor(() => outcome !== undefined), 'then the client connection is cut');
  t.match(outcome, /^cut/, 'never a complete answer');
  t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
  t.match(gateway.results[0], { status: 200, member: `127.0.0.1:${stalling.port}`, aborted: 'upstream' });
  t.ok(await waitFor(() => stalling.sockets.size === 0), 'the connection to the member is closed');
});

t.test('the mid-answer timeout runs only while the reader is ready for more: a slow client is not a stalled member', async (t) => {
  const stalling = await startRawServer(t, (socket) => {
    socket.once('data', () => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n${'x'.repeat(100)}`));
  });
  const gateway = await gatewayFor(t, [stalling], { upstreamTimeoutMs: 30_000 });
  // The proxy's inner step, without a client connection: here the test is the reader, a sink that takes
  // the first 100 bytes and is then not ready for more (its write says wait) until the test reads them.
  const answer = await gateway.proxy.exchange({ method: 'GET', url: '/slow-reader', rawHeaders: ['Host', 'charts.example'], body: null });
  if (answer.kind !== 'answer') return void t.fail(`no answer: ${JSON.stringify(answer)}`);
  let waiting = 0;
  let read = 0;
  const reader = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      waiting += chunk.length;
      release = () => {
        read += waiting;
        waiting = 0;
        done();
      };
    },
  });
  let release: (() => void) | undefined;
  const relayed = answer.body.relay(reader);
  t.ok(await waitFor(() => waiting === 100), 'the first 100 bytes wait to be read');
  await gateway.clock.advanceAsync(5 * 30_000);
  t.equal(await settledWith(relayed), undefined, 'not cut while nobody reads, however long');

  release!();
  t.ok(await waitFor(() => read === 100), 'read');
  await gateway.clock.advanceAsync(29_999);
  t.equal(await settledWith(relayed), undefined, 'reading, and the member quiet for 1 ms less than the timeout: still open');
  await gateway.clock.advanceAsync(1);
  t.equal(await relayed, 'answer', 'then the relay is cut by the member');
  t.equal(answer.body.failure?.message, `pool member 127.0.0.1:${stalling.port} sent nothing for 30000 ms mid-answer`);
  t.ok(await waitFor(() => stalling.sockets.size === 0), 'the connection to the member is closed');
});

t.test('a relay into a response already closed ends at once as the client going away, and releases the member', async (t) => {
  const stalling = await startRawServer(t, (socket) => {
    socket.once('data', () => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n${'x'.repeat(100)}`));
  });
  const gateway = await gatewayFor(t, [stalling], { upstreamTimeoutMs: 30_000 });
  const answer = await gateway.proxy.exchange({ method: 'GET', url: '/gone', rawHeaders: ['Host', 'charts.example'], body: null });
  if (answer.kind !== 'answer') return void t.fail(`no answer: ${JSON.stringify(answer)}`);
  const closed = new Writable({ write: (_chunk, _encoding, done) => done() });
  closed.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(await settledWith(answer.body.relay(closed)), 'client', 'settled without waiting for a drain or a close that will not come');
  t.ok(await waitFor(() => stalling.sockets.size === 0), 'the connection to the member is closed');
});
