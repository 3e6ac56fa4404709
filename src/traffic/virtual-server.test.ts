import t from 'tap';
import { Agent } from 'node:http';
import { createFakeClock } from '../lib/clock.ts';
import { createLogger } from '../lib/logger.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { createPool, type PoolOptions } from './pool.ts';
import type { DataPlaneLevel, ServiceEventHooks } from './service-events.ts';
import { closedPort, startHttpMember } from './test-servers.ts';
import { bodyThrough, freePorts, occupy, startHeldMember, through } from './test-virtual-clients.ts';
import { createVirtualServer } from './virtual-server.ts';

/** A listening virtual server over `members` on a free port, everything on one fake clock. */
async function startVirtualServer(
  t: TapTest,
  members: PoolOptions['members'],
  options: { hooks?: ServiceEventHooks; logger?: ReturnType<typeof createLogger> } = {},
) {
  const clock = createFakeClock();
  const [port] = await freePorts(1);
  const pool = createPool({ name: 'p', members, clock, timers: clock });
  const server = createVirtualServer({
    name: '/T/A/web',
    address: '127.0.0.1',
    port: port!,
    pool,
    clock,
    timers: clock,
    logger: options.logger ?? createLogger({ level: 'silent' }),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  await server.listen();
  t.teardown(() => server.close());
  return { server, pool, clock, port: port! };
}

t.test('requests go round robin over the members, X-Forwarded-For appended', async (t) => {
  const [a, b] = [await startHttpMember(t, 'a'), await startHttpMember(t, 'b')];
  const { port } = await startVirtualServer(t, [a, b]);
  const bodies = [];
  for (let i = 0; i < 4; i++) bodies.push(await bodyThrough(port));
  t.same(bodies, ['a', 'b', 'a', 'b']);
  t.equal(a.received[0]!.headers['x-forwarded-for'], '127.0.0.1');
});

t.test('no member in rotation: 503; a member that does not answer: 502; both as small JSON', async (t) => {
  const empty = await startVirtualServer(t, []);
  const none = await through(empty.port);
  t.match(none, { status: 503, headers: { 'content-type': 'application/json' } });
  t.same(JSON.parse((none as { body: string }).body), { code: 503, message: 'No pool member is available.' });

  const refusing = await startVirtualServer(t, [{ host: '127.0.0.1', port: await closedPort() }]);
  const failed = await through(refusing.port);
  t.match(failed, { status: 502 });
  t.match(JSON.parse((failed as { body: string }).body), { code: 502, message: /did not answer \(connection refused\)/ });
});

t.test('listen() on a taken port rejects with the bind error and leaves nothing open', async (t) => {
  const [port] = await freePorts(1);
  await occupy(t, port!);
  const clock = createFakeClock();
  const server = createVirtualServer({
    name: 'x',
    address: '127.0.0.1',
    port: port!,
    pool: createPool({ name: 'p', members: [], clock }),
    clock,
    timers: clock,
    logger: createLogger({ level: 'silent' }),
  });
  await t.rejects(server.listen(), { code: 'EADDRINUSE' });
  await server.close();
});

t.test('close() refuses new connections, lets the request in flight finish, and closes idle keep-alive connections', async (t) => {
  const member = await startHeldMember(t, 'held');
  const { server, port } = await startVirtualServer(t, [member]);
  const idle = new Agent({ keepAlive: true });
  t.teardown(() => idle.destroy());
  const first = through(port, { agent: idle });
  await member.holding();
  member.release();
  await first;
  const idleSocket = Object.values(idle.freeSockets).flat()[0]!;

  // A keep-alive client too: its connection must not outlive the answer.
  const busy = new Agent({ keepAlive: true });
  t.teardown(() => busy.destroy());
  const inFlight = through(port, { agent: busy });
  await member.holding();
  let closed = false;
  const closing = server.close().then(() => (closed = true));
  t.equal(await through(port), 'refused', 'no new connection is accepted');
  await new Promise((resolve) => idleSocket.once('close', resolve));
  t.pass('the idle keep-alive connection is closed');
  t.equal(closed, false, 'close() waits for the request in flight');
  member.release();
  t.match(
    await inFlight,
    { status: 200, body: 'held', headers: { connection: 'close' } },
    'the request in flight is answered whole, then its connection closes',
  );
  await closing;
});

t.test('close() cuts what is still in flight once the grace has passed on the injected timers', async (t) => {
  const member = await startHeldMember(t, 'held');
  const { server, port, clock } = await startVirtualServer(t, [member]);
  const inFlight = through(port).catch((error: NodeJS.ErrnoException) => error.code);
  await member.holding();
  const closing = server.close();
  clock.advance(4999);
  await clock.advanceAsync(1);
  await closing;
  t.equal(await inFlight, 'ECONNRESET', 'the stuck request is cut after 5 s');
});

t.test('the hooks decide per request what is logged: access lines, and events by level', async (t) => {
  const member = await startHttpMember(t, 'a');
  const logs = captureLogs('info');
  let access = false;
  let level: DataPlaneLevel = 'Critical';
  const { port } = await startVirtualServer(t, [member, { host: '127.0.0.1', port: await closedPort() }], {
    logger: logs.logger,
    hooks: { accessLog: () => access, eventLevel: () => level },
  });
  const run = async () => {
    logs.lines.length = 0;
    await through(port, { path: '/x?token=secret' });
    await through(port, { path: '/x?token=secret' });
    return logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  t.same(await run(), [], 'Critical and no access log: nothing routine');
  access = true;
  const accessLines = await run();
  t.match(accessLines, [
    {
      msg: 'access',
      service: '/T/A/web',
      client: /^127\.0\.0\.1:\d+$/,
      method: 'GET',
      path: '/x',
      status: 200,
      member: `127.0.0.1:${member.port}`,
      bytes: Number,
      ms: 0,
    },
    { msg: 'access', status: 502 },
  ]);
  t.notMatch(logs.text(), 'secret', 'never the query string');
  access = false;
  level = 'Error';
  t.match(
    (await run()).map((line) => line.msg),
    ['request failed'],
    'Error: only the member failure',
  );
  level = 'Info';
  const info = (await run()).map((line) => String(line.msg));
  t.same(
    info.filter((msg) => !msg.startsWith('connection')),
    ['request', 'request failed'],
    'Info: every request',
  );
  t.ok(info.includes('connection opened'), 'and, being more verbose than Notice, the connections');
  level = 'Notice';
  await run();
  t.ok(
    logs.lines.length > 0 && logs.lines.every((line) => /connection (opened|closed)|request failed/.test(line)),
    'Notice: connections and failures, not requests',
  );
});
