// Header names as they reach the socket, read byte for byte: real clients match names case-sensitively
// (a script that greps `^Location:` misses `location:`). Every answer of our own writes names in their
// conventional case; a member's answer passed on keeps the member's case, as real proxies do.
import { connect } from 'node:net';
import t from 'tap';
import { startTestSystem } from '../app/test-system.ts';
import { MODULES } from '../app/modules.ts';
import { createFakeClock } from '../lib/clock.ts';
import { isConventionalHeaderName } from '../lib/header-case.ts';
import { createLogger } from '../lib/logger.ts';
import { createPool } from '../traffic/pool.ts';
import { closedPort, startHttpMember, startProxiedGateway } from '../traffic/test-servers.ts';
import { freePorts } from '../traffic/test-virtual-clients.ts';
import { createVirtualServer } from '../traffic/virtual-server.ts';

type RawAnswer = { status: number; lines: string[]; names: string[]; body: string };

/** Sends `text` as it is and reads the answer's bytes until the server closes (every request here says `Connection: close`). */
function exchange(url: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text.replaceAll('HOST', `${hostname}:${port}`)));
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const headEnd = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, headEnd).split('\r\n');
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        lines,
        names: lines.map((line) => line.slice(0, line.indexOf(':'))),
        body: raw.slice(headEnd + 4),
      });
    });
  });
}

const request = (method: string, path: string, headers: string[] = [], body = '') =>
  [
    `${method} ${path} HTTP/1.1`,
    'Host: HOST',
    ...headers,
    ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    'Connection: close',
    '',
    body,
  ].join('\r\n');

/** The lines of the head whose name is exactly `name` (as a script's `grep '^Name:'` finds them). */
const grep = (answer: RawAnswer, name: string) => answer.lines.filter((line) => line.startsWith(`${name}: `));

const unconventional = (answer: RawAnswer) => answer.names.filter((name) => !isConventionalHeaderName(name));

const ADMIN = { adminUser: 'admin', adminPassword: 'header case admin pw' };

t.test('the roles’ own answers: Location, Set-Cookie, WWW-Authenticate, Retry-After and every other name as clients expect', async (t) => {
  // Uploads are taken but not processed (concurrency 0): the snapshot stays 202 with Retry-After. Only the
  // roles asked, with their interfaces (the central and device roles' are checked by the conformance run).
  const { system } = await startTestSystem(t, {
    modules: MODULES.filter((m) => !['topology', 'device-config'].includes(m.name)),
    config: { ...ADMIN, rateLimitLimit: 1, snapshotConcurrency: 0, roles: ['gateway', 'mapping', 'diagnostics', 'login'] },
  });

  const form = `userid=admin&passwd=${encodeURIComponent(ADMIN.adminPassword)}`;
  const login = await exchange(
    system.url('login'),
    request('POST', '/resource/loginAction.jsp', ['Content-Type: application/x-www-form-urlencoded'], form),
  );
  t.equal(login.status, 302, 'logged in');
  t.ok(grep(login, 'Set-Cookie').length >= 2, 'each cookie on its own `Set-Cookie:` line');
  t.equal(grep(login, 'Location').length, 1, 'one `Location:` line');
  t.same(unconventional(login), []);
  const cookie = grep(login, 'Set-Cookie')
    .map((line) => line.slice('Set-Cookie: '.length).split(';', 1)[0])
    .join('; ');

  const boundary = 'portolan-header-case';
  const multipart = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="snapshot"; filename="device.snapshot.tgz"',
    'Content-Type: application/octet-stream',
    '',
    'not really an archive',
    `--${boundary}--`,
    '',
  ].join('\r\n');
  const upload = await exchange(
    system.url('diagnostics'),
    request(
      'POST',
      '/snapshot-analyzer/api/snapshots',
      [`Cookie: ${cookie}`, `Content-Type: multipart/form-data; boundary=${boundary}`],
      multipart,
    ),
  );
  t.ok([201, 302].includes(upload.status), `the upload is taken (${upload.status}: ${upload.body.slice(0, 200)})`);
  const location = grep(upload, 'Location');
  t.equal(location.length, 1, 'the upload script’s `grep ^Location:` finds the new snapshot');
  t.same(unconventional(upload), []);

  const snapshot = (location[0] ?? 'Location: /snapshot-analyzer/api/snapshots/none')
    .slice('Location: '.length)
    .replace(/^https?:\/\/[^/]+/, '');
  const processing = await exchange(
    system.url('diagnostics'),
    request('GET', snapshot, [`Cookie: ${cookie}`, 'Accept: application/vnd.vendor.diagnostics.api+json']),
  );
  t.equal(processing.status, 202, 'still processing');
  t.same(grep(processing, 'Retry-After'), ['Retry-After: 2']);
  t.same(unconventional(processing), []);

  const unauthorized = await exchange(system.url('gateway'), request('GET', '/access/sessions/s1'));
  t.equal(unauthorized.status, 401);
  t.equal(grep(unauthorized, 'WWW-Authenticate').length, 1, 'the challenge on a `WWW-Authenticate:` line');
  t.same(unconventional(unauthorized), []);
  const malformedBearer = await exchange(system.url('gateway'), request('GET', '/rate_limit_status', ['Authorization: Bearer a b']));
  t.equal(malformedBearer.status, 400);
  t.same(grep(malformedBearer, 'WWW-Authenticate'), ['WWW-Authenticate: Bearer error="invalid_request"']);
  t.same(unconventional(malformedBearer), []);

  const token = ['Authorization: Bearer header-case-token'];
  t.equal((await exchange(system.url('gateway'), request('GET', '/api/vessels', token))).status, 200, 'the one request the limit allows');
  const limited = await exchange(system.url('gateway'), request('GET', '/api/vessels', token));
  t.equal(limited.status, 429);
  t.equal(grep(limited, 'Retry-After').length, 1, '`Retry-After:` on the 429');
  t.same(unconventional(limited), []);

  // The adapter's own refusal, written on the socket itself (no response object: node:http could not parse the head).
  const malformed = await exchange(system.url('mapping'), 'GET / HTTP/1.1\r\nHost: HOST\r\nBad Header: x\r\n\r\n');
  t.equal(malformed.status, 400);
  t.ok(malformed.names.includes('Content-Type') && malformed.names.includes('Content-Length'), malformed.names.join(', '));
  t.same(unconventional(malformed), []);

  const early = await exchange(system.url('mapping'), request('POST', '/api/charts', ['Content-Type: text/plain'], 'x'));
  t.equal(early.status, 415, 'an early refusal');
  t.same(unconventional(early), [], `names: ${early.names.join(', ')}`);
  t.ok(early.names.includes('Connection') && early.names.includes('X-Request-Id'));
});

t.test('a member’s answer passed on keeps the member’s own case; the gateway’s own answers are conventional', async (t) => {
  const member = await startHttpMember(t, 'm', (req, res) => {
    req.resume();
    res.writeHead(201, ['location', '/api/charts/7', 'x-member-Odd', 'kept', 'content-type', 'text/plain']);
    res.end('made');
  });
  const gateway = await startProxiedGateway(t, [member]);
  const passed = await exchange(gateway.url, request('GET', '/api/charts'));
  t.equal(passed.status, 201);
  t.same(
    passed.names.filter((name) => !['Date', 'Connection', 'Transfer-Encoding', 'Keep-Alive'].includes(name)),
    ['location', 'x-member-Odd', 'content-type'],
    'as the member wrote them, in order',
  );

  const down = await startProxiedGateway(t, [{ host: '127.0.0.1', port: await closedPort() }]);
  const failed = await exchange(down.url, request('GET', '/api/charts'));
  t.equal(failed.status, 502, 'the gateway’s own answer');
  t.same(unconventional(failed), [], `names: ${failed.names.join(', ')}`);
  t.ok(failed.names.includes('Content-Type') && failed.names.includes('X-Request-Id'));
});

t.test('the device’s data plane: its own 503 is conventional too', async (t) => {
  const clock = createFakeClock();
  const [port] = await freePorts(1);
  const server = createVirtualServer({
    name: '/T/A/web',
    address: '127.0.0.1',
    port: port!,
    pool: createPool({ name: 'p', members: [], clock, timers: clock }),
    clock,
    timers: clock,
    logger: createLogger({ level: 'silent' }),
  });
  await server.listen();
  t.teardown(() => server.close());
  const none = await exchange(`http://127.0.0.1:${port}`, request('GET', '/'));
  t.equal(none.status, 503);
  t.ok(none.names.includes('Content-Type'));
  t.same(unconventional(none), [], `names: ${none.names.join(', ')}`);
});
