import t from 'tap';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { loadSpec } from '../lib/spec-catalog.ts';
import { send } from './test-clients.ts';
import { closedPort, startHttpMember, startProxiedGateway as gatewayFor, startRawServer, waitFor } from './test-servers.ts';

const validateGatewayError = createSpecValidator(loadSpec('rate-limit')).at('/components/schemas/GatewayError');

/** Raw request text to the gateway (headers exactly as written); resolves with the raw answer once the gateway closes. */
function sendRaw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (answer += c));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

const headerNames = (raw: string[]) => raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());

t.test('status, reason, headers and body pass through unchanged, several Set-Cookie lines intact', async (t) => {
  let seen: { method?: string; url?: string; raw: string[]; body: string } | undefined;
  const member = await startHttpMember(t, 'm', (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen = { method: req.method, url: req.url, raw: req.rawHeaders, body };
      res.writeHead(201, 'Charted', [
        'Set-Cookie',
        'a=1; Path=/',
        'X-Chart',
        'Newfoundland',
        'Set-Cookie',
        'b=2; HttpOnly',
        'Set-Cookie',
        'c=3; Secure',
        'Content-Type',
        'application/json; charset=utf-8',
        'Location',
        '/api/charts/42',
        'Cache-Control',
        'no-store',
      ]);
      res.end('{"id":42}');
    });
  });
  const gateway = await gatewayFor(t, [member]);
  const answer = await send(
    gateway.port,
    {
      method: 'POST',
      path: '/api/charts?region=north&note=a%20b',
      headers: { host: 'charts.example:8080', 'content-type': 'application/json', 'x-request-tag': 'T1', cookie: 'sid=9' },
    },
    '{"name":"Bay of Islands"}',
  );

  t.equal(answer.status, 201);
  t.equal(answer.statusMessage, 'Charted', 'reason phrase kept');
  t.same(answer.headers['set-cookie'], ['a=1; Path=/', 'b=2; HttpOnly', 'c=3; Secure'], 'three Set-Cookie lines, in order');
  t.match(answer.headers, {
    'x-chart': 'Newfoundland',
    'content-type': 'application/json; charset=utf-8',
    location: '/api/charts/42',
    'cache-control': 'no-store',
  });
  t.equal(answer.body.toString(), '{"id":42}');
  t.match(
    seen,
    { method: 'POST', url: '/api/charts?region=north&note=a%20b', body: '{"name":"Bay of Islands"}' },
    'method, target and body unchanged',
  );
  const upstreamHeaders = Object.fromEntries(seen!.raw.flatMap((v, i, all) => (i % 2 === 0 ? [[v.toLowerCase(), all[i + 1]]] : [])));
  t.match(
    upstreamHeaders,
    { host: 'charts.example:8080', 'content-type': 'application/json', 'x-request-tag': 'T1', cookie: 'sid=9' },
    'Host and end-to-end fields unchanged',
  );
  t.same(gateway.results, [{ status: 201, member: `127.0.0.1:${member.port}` }], 'forward() reports status and member');
});

t.test('hop-by-hop fields and the fields Connection names are removed both ways', async (t) => {
  let upstreamHead = '';
  const member = await startRawServer(t, (socket) => {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      upstreamHead += chunk;
      if (!upstreamHead.includes('\r\n\r\n')) return;
      socket.write(
        [
          'HTTP/1.1 200 OK',
          'Connection: keep-alive, X-Upstream-Hop',
          'X-Upstream-Hop: member-only',
          'Keep-Alive: timeout=99, max=7',
          'Proxy-Connection: keep-alive',
          'Upgrade: nothing',
          'TE: trailers',
          'Transfer-Encoding: chunked',
          'X-End: kept',
          '',
          '5',
          'hello',
          '0',
          '',
          '',
        ].join('\r\n'),
      );
    });
  });
  const gateway = await gatewayFor(t, [member]);
  const answer = await sendRaw(
    gateway.port,
    [
      'GET /hop HTTP/1.1',
      'Host: charts.example',
      'Connection: close, X-Client-Hop',
      'X-Client-Hop: client-only',
      'Keep-Alive: timeout=9',
      'Proxy-Connection: keep-alive',
      'TE: trailers',
      'Upgrade: h2c',
      'X-End: kept',
      '',
      '',
    ].join('\r\n'),
  );

  const sent = upstreamHead.toLowerCase();
  for (const field of ['x-client-hop', 'keep-alive: timeout=9', 'proxy-connection', '\r\nte:', 'upgrade'])
    t.notMatch(sent, field, `member does not get ${field.trim()}`);
  t.notMatch(sent, /connection:[^\r]*x-client-hop/, "nor the client's Connection list");
  t.match(sent, 'x-end: kept');
  t.match(sent, 'host: charts.example\r\n', 'Host passed on unchanged');

  const [head, body] = answer.split('\r\n\r\n');
  const got = head!.toLowerCase();
  for (const field of ['x-upstream-hop', 'timeout=99', 'proxy-connection', 'upgrade', '\r\nte:'])
    t.notMatch(got, field, `client does not get ${field.trim()}`);
  t.notMatch(got, /connection:[^\r]*x-upstream-hop/);
  t.match(got, 'x-end: kept');
  t.match(head, /^HTTP\/1\.1 200 OK/);
  t.match(body, /hello/, 'chunked body re-framed for the client');
});

t.test('X-Forwarded-For gets the client address, appended to what the client sent', async (t) => {
  const forwarded: string[][] = [];
  const member = await startHttpMember(t, 'm', (req, res) => {
    forwarded.push(req.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1]!.toLowerCase() === 'x-forwarded-for'));
    res.end();
  });
  const gateway = await gatewayFor(t, [member]);
  await send(gateway.port, {});
  await send(gateway.port, { headers: { 'x-forwarded-for': '203.0.113.7' } });
  await send(gateway.port, { headers: { 'x-forwarded-for': ['203.0.113.7', '198.51.100.2, 192.0.2.1'] } });
  t.same(
    forwarded,
    [['127.0.0.1'], ['203.0.113.7, 127.0.0.1'], ['203.0.113.7, 198.51.100.2, 192.0.2.1, 127.0.0.1']],
    'one field, client address last',
  );
});

t.test('connections to a member are kept alive and reused', async (t) => {
  const member = await startHttpMember(t, 'm');
  const gateway = await gatewayFor(t, [member], { connectionsPerMember: 2 });
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${gateway.url}/api/vessels/${i}`);
    await res.text();
    if (res.status !== 200) t.fail(`request ${i}: ${res.status}`);
  }
  t.equal(member.received.length, 200, 'every request reached the member');
  t.ok(member.connections() <= 2, `${member.connections()} TCP connection(s) for 200 sequential requests`);
});

t.test("502 in the gateway's error shape when no member is in rotation", async (t) => {
  const port = await closedPort();
  const gateway = await gatewayFor(t, [{ host: '127.0.0.1', port }]);
  gateway.pool.start();
  t.ok(await waitFor(() => gateway.pool.status().membersUp === 0), 'member marked down');
  const answer = await send(gateway.port, { path: '/api/charts' });
  t.equal(answer.status, 502);
  t.equal(answer.headers['content-type'], 'application/json');
  const body = JSON.parse(answer.body.toString());
  t.same(body, { error: 'bad gateway', 'error-message': 'no member of pool mapping is up' });
  t.ok(validateGatewayError(body), 'GatewayError of specs/rate-limit.yaml');
  t.same(gateway.results, [{ status: 502 }]);

  const empty = await gatewayFor(t, []);
  t.equal((await send(empty.port, {})).status, 502, 'an empty pool too');
});

t.test('502 when the member refuses or resets the connection before answering', async (t) => {
  const port = await closedPort();
  const refused = await gatewayFor(t, [{ host: '127.0.0.1', port }]);
  let answer = await send(
    refused.port,
    { method: 'POST', path: '/api/charts', headers: { 'content-type': 'application/json' } },
    '{"a":1}',
  );
  t.equal(answer.status, 502);
  let body = JSON.parse(answer.body.toString());
  t.same(body, { error: 'bad gateway', 'error-message': `pool member 127.0.0.1:${port} did not answer (connection refused)` });
  t.ok(validateGatewayError(body));
  t.same(refused.results, [{ status: 502, member: `127.0.0.1:${port}` }]);

  const resetting = await startRawServer(t, (socket) => socket.once('data', () => socket.resetAndDestroy()));
  const reset = await gatewayFor(t, [resetting]);
  answer = await send(reset.port, { path: '/api/charts' });
  t.equal(answer.status, 502);
  body = JSON.parse(answer.body.toString());
  t.same(body, { error: 'bad gateway', 'error-message': `pool member 127.0.0.1:${resetting.port} did not answer (connection reset)` });

  const closing = await startRawServer(t, (socket) => socket.once('data', () => socket.end()));
  const closed = await gatewayFor(t, [closing]);
  answer = await send(closed.port, { path: '/api/charts' });
  t.same(
    [answer.status, JSON.parse(answer.body.toString())['error-message']],
    [502, `pool member 127.0.0.1:${closing.port} did not answer (connection reset)`],
    'closed without an answer',
  );
});

t.test('a member failing mid-body cuts the client connection; the gateway keeps serving', async (t) => {
  const member = await startRawServer(t, (socket) => {
    socket.once('data', () => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(100)}`);
      setTimeout(() => socket.destroy(), 50);
    });
  });
  const healthy = await startHttpMember(t, 'healthy');
  const gateway = await gatewayFor(t, [member, healthy]);
  const outcome = await new Promise<{ status?: number; bytes: number; error?: string }>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port: gateway.port, path: '/broken', agent: false }, (res: IncomingMessage) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('error', (e) => resolve({ status: res.statusCode, bytes, error: e.message }));
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
    });
    req.on('error', (e) => resolve({ bytes: 0, error: e.message }));
    req.end();
  });
  t.equal(outcome.status, 200, 'the answer had started');
  t.ok(outcome.error, `the client sees the cut (${outcome.error})`);
  t.ok(outcome.bytes < 1000, 'and never a complete body');
  t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
  t.match(gateway.results[0], { status: 200, member: `127.0.0.1:${member.port}`, aborted: 'upstream' });
  t.equal((await send(gateway.port, {})).body.toString(), 'healthy', 'the next request is served');
});

t.test('a client going away mid-body aborts the upstream request; nothing crashes', async (t) => {
  let upstreamClosedEarly = false;
  const member = await startHttpMember(t, 'm', (req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 1)), 5);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosedEarly = !res.writableFinished;
      });
      return;
    }
    res.end('ok');
  });
  const gateway = await gatewayFor(t, [member]);
  await new Promise<void>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port: gateway.port, path: '/stream', agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => undefined);
    req.end();
  });
  t.ok(await waitFor(() => upstreamClosedEarly), "the member's response was cut off");
  t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
  t.match(gateway.results[0], { status: 200, aborted: 'client' });
  t.equal((await send(gateway.port, { path: '/after' })).body.toString(), 'ok', 'the gateway keeps serving');
});

t.test('a client going away mid-upload or before the answer aborts the upstream request', async (t) => {
  let uploadCut = false;
  const member = await startHttpMember(t, 'm', (req, res) => {
    req.on('data', () => undefined);
    req.on('close', () => {
      if (!req.complete) uploadCut = true;
    });
    req.on('end', () => res.end('ok'));
  });
  const gateway = await gatewayFor(t, [member]);
  const req = httpRequest({
    host: '127.0.0.1',
    port: gateway.port,
    method: 'PUT',
    path: '/upload',
    agent: false,
    headers: { 'content-length': String(10 * 1024 * 1024) },
  });
  req.on('error', () => undefined);
  req.write(Buffer.alloc(1024 * 1024));
  await waitFor(() => member.received.length === 1);
  req.destroy();
  t.ok(await waitFor(() => uploadCut), 'the member sees the upload cut');
  t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
  t.match(gateway.results[0], { status: 499, aborted: 'client' });

  const hung = await startRawServer(t, (socket) => socket.resume());
  const waiting = await gatewayFor(t, [hung]);
  const pending = httpRequest({ host: '127.0.0.1', port: waiting.port, path: '/slow', agent: false });
  pending.on('error', () => undefined);
  pending.end();
  t.ok(await waitFor(() => hung.sockets.size === 1), 'request reached the member');
  pending.destroy();
  t.ok(await waitFor(() => hung.sockets.size === 0), 'the upstream request is aborted with the client');
  t.ok(await waitFor(() => waiting.results.length === 1));
  t.match(waiting.results[0], { status: 499, aborted: 'client' });
  t.equal((await send(gateway.port, { method: 'POST' }, 'x')).body.toString(), 'ok', 'the gateway keeps serving');
});

t.test('Expect: 100-continue is answered by the gateway; the member gets the body', async (t) => {
  const member = await startHttpMember(t, 'm', (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => res.end(`${req.headers.expect ?? 'no expect'}:${body}`));
  });
  const gateway = await gatewayFor(t, [member]);
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: gateway.port, method: 'POST', agent: false, headers: { expect: '100-continue', 'content-length': '5' } },
      (res) => {
        let out = '';
        res.on('data', (c) => (out += c));
        res.on('end', () => resolve(out));
      },
    );
    req.on('continue', () => req.end('hello'));
    req.on('error', reject);
  });
  t.equal(text, 'no expect:hello');
});

t.test('HEAD and 304 answers pass through without a body', async (t) => {
  const member = await startHttpMember(t, 'm', (req, res) => {
    if (req.headers['if-none-match'] === '"v1"') {
      res.writeHead(304, { etag: '"v1"' });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '11', etag: '"v1"' });
    res.end(req.method === 'HEAD' ? undefined : 'hello world');
  });
  const gateway = await gatewayFor(t, [member]);
  const head = await send(gateway.port, { method: 'HEAD' });
  t.match(head, { status: 200, headers: { 'content-length': '11', etag: '"v1"' } });
  t.equal(head.body.length, 0);
  const notModified = await send(gateway.port, { headers: { 'if-none-match': '"v1"' } });
  t.match(notModified, { status: 304, headers: { etag: '"v1"' } });
  t.equal(notModified.body.length, 0);
  t.same(
    headerNames(notModified.rawHeaders).filter((n) => n === 'etag'),
    ['etag'],
  );
});
