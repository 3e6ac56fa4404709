import t from 'tap';
import { connect } from 'node:net';
import { request as send } from 'undici';
import { startTestSystem } from '../app/test-system.ts';

// The request path against hostile and careless clients, on the real system with its real security.
// Each case here failed before the request path was rebuilt (issue 9): see the comment on each.

const ADMIN = { adminUser: 'admin', adminPassword: 'c0rrect-Horse-battery' };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const { system } = await startTestSystem(t, {
  config: { ...ADMIN, headersTimeoutMs: 300, requestTimeoutMs: 0, maxUrlLength: 2048, maxHeaderBytes: 8192 },
});

/** A raw HTTP exchange: what a socket receives for `text`, until the server closes or `stop` says so. */
function raw(port: number, text: string | undefined, stop: (received: string) => boolean = () => false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (stop(received)) socket.destroy();
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    if (text !== undefined) socket.write(text);
  });
}
const port = (role: 'mapping' | 'device' | 'gateway') => new URL(system.url(role)).port;

t.test('a body without Content-Type gets 415 in the interface shape, never a byte-by-byte 400', async (t) => {
  // Before: the body was validated as a raw Buffer: a 400 of ~5 MB naming every byte (1 MB: a stack overflow, 500).
  for (const size of [100_000, 1_000_000]) {
    const response = await send(`${system.url('mapping')}/api/charts`, { method: 'POST', body: Buffer.alloc(size, 'a') });
    const text = await response.body.text();
    t.equal(response.statusCode, 415, `${size} bytes: 415`);
    t.ok(text.length < 300, `bounded answer (${text.length} characters)`);
    t.match(JSON.parse(text), { status: 'error', message: /no Content-Type; send one of: application\/json/ });
  }
});

t.test('a body of an undeclared media type gets 415', async (t) => {
  const response = await send(`${system.url('mapping')}/api/charts`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
  t.equal(response.statusCode, 415);
  t.match(await response.body.json(), { status: 'error', message: /not accepted here; send one of: application\/json/ });
});

t.test('credentials are checked before the request is parsed or validated', async (t) => {
  // Before: an unauthenticated POST with an invalid body got 400 naming the missing field; an
  // unimplemented device operation answered 501 to anyone.
  const invalid = await send(`${system.url('device')}/mgmt/tm/access/oauth/oauth-client-app`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(invalid.statusCode, 401);
  t.same(await invalid.body.json(), { code: 401, message: 'Authorization failed: no user authentication header or token detected.', errorStack: [], apiError: 1 });
  t.equal(invalid.headers['www-authenticate'], 'Basic realm="Enterprise Manager"');
  const malformed = await send(`${system.url('device')}/mgmt/tm/traffic/rule`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basic('admin', 'wrong') }, body: '{"name":' });
  t.equal(malformed.statusCode, 401, 'wrong password: 401 before the JSON is parsed');
  await malformed.body.dump();
  const unimplemented = await send(`${system.url('device')}/mgmt/tm/traffic/rule`);
  t.equal(unimplemented.statusCode, 401, 'a read still needs credentials');
  await unimplemented.body.dump();
  const authorized = await send(`${system.url('device')}/mgmt/tm/traffic/rule`, { headers: { authorization: basic(ADMIN.adminUser, ADMIN.adminPassword) } });
  t.equal(authorized.statusCode, 200, 'with credentials: answered');
  await authorized.body.dump();
});

t.test('large unauthenticated bodies are refused and another role keeps answering meanwhile', async (t) => {
  // Before: six parallel 1 MB posts to /access/sessions, unauthenticated, stalled every role for ~4 s.
  const big = JSON.stringify({ variables: { a: 'x'.repeat(1_000_000) } });
  const posts = Array.from({ length: 6 }, () =>
    send(`${system.url('gateway')}/access/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }).then(async (r) => {
      await r.body.dump();
      return r.statusCode;
    }),
  );
  const health = await send(`${system.url('mapping')}/health`);
  t.equal(health.statusCode, 200, 'another role answers meanwhile');
  await health.body.dump();
  t.same(await Promise.all(posts), [401, 401, 401, 401, 401, 401]);
});

t.test('a path parameter longer than the spec allows is a 400, not a router 404', async (t) => {
  const response = await send(`${system.url('mapping')}/api/vessels/${'v'.repeat(150)}`);
  t.equal(response.statusCode, 400);
  const body = (await response.body.json()) as { message: string };
  t.match(body.message, /path\.vesselId must match pattern/);
  t.notMatch(body.message, /vvvvvvvvvv/, 'the value is not echoed');
});

t.test('a URL over the limit gets 414 in the interface shape', async (t) => {
  const response = await send(`${system.url('mapping')}/api/vessels?x=${'a'.repeat(3000)}`);
  t.equal(response.statusCode, 414);
  t.match(await response.body.json(), { status: 'error', message: /longer than 2048 characters/ });
});

t.test('a request head over the limit gets 431 in the interface shape', async (t) => {
  const answer = await raw(Number(port('mapping')), `GET /api/vessels HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(10_000)}\r\n\r\n`);
  t.match(answer, /^HTTP\/1\.1 431 /);
  t.match(answer, /"status":"error"/);
  t.match(answer, /larger than the limit/);
});

t.test('malformed HTTP gets 400 in the interface shape', async (t) => {
  const answer = await raw(Number(port('device')), 'BREW /pot HTCPCP/1.0\r\n\r\n');
  t.match(answer, /^HTTP\/1\.1 400 /);
  t.match(answer, /"code":400,"message":"The request is not valid HTTP\/1.1."/);
});

t.test('a client that never finishes its head gets 408 in the interface shape', async (t) => {
  // Before: an empty `400 Bad Request` (or a socket held for minutes).
  const answer = await raw(Number(port('mapping')), 'GET /api/vessels HTTP/1.1\r\nHost: x\r\n');
  t.match(answer, /^HTTP\/1\.1 408 /);
  t.match(answer, /"status":"error"/);
});

t.test('an early answer to an unread body closes the connection instead of reading it', async (t) => {
  const answer = await raw(
    Number(port('device')),
    'POST /mgmt/tm/traffic/rule HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"name":',
  );
  t.match(answer, /^HTTP\/1\.1 401 /);
  t.match(answer, /connection: close/i);
});

t.test('a form field without a name (a password typed alone) is never repeated in the answer', async (t) => {
  // Before: the 400 named the unexpected property: `body must NOT have additional properties 'MyS3cretPassw0rd'`.
  const response = await send(`${system.url('login')}/resource/loginAction.jsp`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/vnd.vendor.diagnostics.api+json' },
    body: 'userid=alice&MyS3cretPassw0rd',
  });
  const text = await response.body.text();
  t.equal(response.statusCode, 400);
  t.notMatch(text, /MyS3cret/);
  t.match(text, /only the properties the spec lists are allowed/);
});

t.test('HEAD is answered wherever GET is, without a body, and listed in Allow', async (t) => {
  const head = await send(`${system.url('mapping')}/api/vessels`, { method: 'HEAD' });
  t.equal(head.statusCode, 200);
  t.equal(head.headers['content-type'], 'application/json');
  t.equal(await head.body.text(), '');
  const wrong = await send(`${system.url('mapping')}/api/vessels`, { method: 'DELETE' });
  t.equal(wrong.statusCode, 405);
  t.equal(wrong.headers.allow, 'GET, HEAD');
  await wrong.body.dump();
});

t.test('an unknown path is not repeated in the 404', async (t) => {
  const response = await send(`${system.url('mapping')}/no/such/path-with-s3cret-token`);
  t.equal(response.statusCode, 404);
  const text = await response.body.text();
  t.notMatch(text, /s3cret/);
  t.same(JSON.parse(text), { status: 'error', message: 'No resource at this path.' });
});
