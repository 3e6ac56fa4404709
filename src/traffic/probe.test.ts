import t from 'tap';
import { createFakeClock, hasSettled } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { probeHealth } from './probe.ts';
import { closedPort, startHttpMember, startRawServer, waitFor } from './test-servers.ts';

// The seed's probe timeout: members that answer do so long before it, however busy the machine.
const timeoutMs = 16_000;

/** A raw member that answers `reply` once it has read a whole request head. */
const answering = (reply: string | string[]) => async (t: TapTest) => {
  const captured: string[] = [];
  const server = await startRawServer(t, (socket) => {
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', async (chunk: string) => {
      head += chunk;
      if (!head.endsWith('\r\n\r\n')) return;
      captured.push(head);
      // Several writes with pauses: the status line may arrive in pieces.
      for (const part of Array.isArray(reply) ? reply : [reply]) {
        socket.write(part, 'latin1');
        await new Promise((r) => setTimeout(r, 20));
      }
      socket.end();
    });
  });
  return { ...server, captured };
};

t.test("the probe sends exactly the seed's request bytes", async (t) => {
  const member = await answering('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')(t);
  const result = await probeHealth(member, { timeoutMs });
  t.same(result, { up: true, status: 200 });
  t.equal(member.captured.length, 1, 'one request');
  t.equal(member.captured[0], `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${member.port}\r\nConnection: close\r\n\r\n`);
});

t.test('a configured send string is sent as is', async (t) => {
  const member = await answering('HTTP/1.1 200 OK\r\n\r\n')(t);
  const send = 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';
  t.same(await probeHealth(member, { timeoutMs, send }), { up: true, status: 200 });
  t.equal(member.captured[0], send);
});

t.test('the status code decides: 200 up, 503 and 500 down, a 200 in the body does not count', async (t) => {
  const cases: [string, unknown][] = [
    ['HTTP/1.1 200 OK\r\n\r\n{"status":"healthy"}', { up: true, status: 200 }],
    ['HTTP/1.0 200 OK\r\n\r\n', { up: true, status: 200 }],
    ['HTTP/1.1 503 Service Unavailable\r\n\r\n{"status":"unhealthy"}', { up: false, status: 503, reason: 'HTTP status 503' }],
    ['HTTP/1.1 500 Internal Server Error\r\n\r\n{"status":"error"}', { up: false, status: 500, reason: 'HTTP status 500' }],
    ['HTTP/1.1 404 Not Found\r\n\r\n200', { up: false, status: 404, reason: 'HTTP status 404' }],
    ['HTTP/1.1 2000 OK\r\n\r\n', { up: false, status: null, reason: 'no HTTP status line in the answer' }],
  ];
  for (const [reply, expected] of cases) {
    const member = await answering(reply)(t);
    t.same(await probeHealth(member, { timeoutMs }), expected, JSON.stringify(reply.split('\r\n')[0]));
  }
});

t.test('a status line that arrives in pieces is read to its end', async (t) => {
  const member = await answering(['HT', 'TP/1.1 2', '00', ' OK\r', '\n\r\n'])(t);
  t.same(await probeHealth(member, { timeoutMs }), { up: true, status: 200 });
  const down = await answering(['HTTP/1.1 50', '3 Service Unavailable\r\n\r\n'])(t);
  t.same(await probeHealth(down, { timeoutMs }), { up: false, status: 503, reason: 'HTTP status 503' });
});

t.test('garbage, silence then close, and an endless line without a status are down', async (t) => {
  const garbage = await answering('SSH-2.0-OpenSSH_9.6\r\n')(t);
  t.same(await probeHealth(garbage, { timeoutMs }), { up: false, status: null, reason: 'no HTTP status line in the answer' });
  const closing = await startRawServer(t, (socket) => socket.end());
  t.same(await probeHealth(closing, { timeoutMs }), { up: false, status: null, reason: 'connection closed without an answer' });
  const endless = await startRawServer(t, (socket) => socket.write('x'.repeat(20_000)));
  t.same(await probeHealth(endless, { timeoutMs }), { up: false, status: null, reason: 'no HTTP status line in the answer' });
});

t.test('a refused connection is down', async (t) => {
  const port = await closedPort();
  t.same(await probeHealth({ host: '127.0.0.1', port }, { timeoutMs }), { up: false, status: null, reason: 'connection refused' });
});

t.test('a reset connection is down', async (t) => {
  const member = await startRawServer(t, (socket) => socket.once('data', () => socket.resetAndDestroy()));
  t.same(await probeHealth(member, { timeoutMs }), { up: false, status: null, reason: 'connection reset' });
});

t.test('a hung member is down after the timeout, not before, and its socket is closed', async (t) => {
  const member = await startRawServer(t, (socket) => socket.resume()); // reads, never answers
  const clock = createFakeClock();
  const probing = probeHealth(member, { timeoutMs, timers: clock });
  t.ok(await waitFor(() => member.sockets.size === 1), 'connected');
  await clock.advanceAsync(timeoutMs - 1);
  t.notOk(await hasSettled(probing), 'still waiting 1 ms before the timeout');
  await clock.advanceAsync(1);
  t.same(await probing, { up: false, status: null, reason: 'no answer within 16000 ms' });
  t.ok(await waitFor(() => member.sockets.size === 0), 'the member sees the connection closed (no leak)');
});

t.test('a cancelled probe closes its socket at once', async (t) => {
  const member = await startRawServer(t, (socket) => socket.resume()); // reads, never answers
  const controller = new AbortController();
  const probing = probeHealth(member, { timeoutMs, signal: controller.signal });
  t.ok(await waitFor(() => member.sockets.size === 1), 'connected');
  controller.abort();
  t.same(await probing, { up: false, status: null, reason: 'probe cancelled' });
  t.ok(await waitFor(() => member.sockets.size === 0), 'socket closed');
});

t.test('a real node:http member answering /health is judged by its status', async (t) => {
  const member = await startHttpMember(t, 'a');
  t.same(await probeHealth(member, { timeoutMs }), { up: true, status: 200 });
  member.setHealth(503);
  t.same(await probeHealth(member, { timeoutMs }), { up: false, status: 503, reason: 'HTTP status 503' });
  t.ok(await waitFor(() => member.connections() === 2), 'one connection per probe');
});
