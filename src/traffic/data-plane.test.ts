import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { createFakeClock } from '../lib/clock.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { createDataPlane, type VirtualServiceSpec } from './data-plane.ts';
import { startHttpMember, waitFor } from './test-servers.ts';
import { bodyThrough, freePorts, occupy, startHeldMember, through } from './test-virtual-clients.ts';

/** Virtual ports are real free ports minus this offset, so every listener lands on a free ephemeral port. */
const OFFSET = 10_000;

function startDataPlane(t: TapTest, logger: Logger = createLogger({ level: 'silent' })) {
  const clock = createFakeClock();
  const dataDir = t.testdir();
  const dataPlane = createDataPlane({ portOffset: OFFSET, clock, timers: clock, logger, dataDir });
  t.teardown(() => dataPlane.close());
  return { dataPlane, clock, dataDir };
}

/** A service on 127.0.0.1 listening on the real port `port`, over `members`. */
function service(
  key: string,
  port: number,
  members: readonly { host: string; port: number }[],
  monitor: 'http' | null = null,
): VirtualServiceSpec {
  return {
    key,
    addresses: ['127.0.0.1'],
    port: port - OFFSET,
    pool: { key: `${key}_pool`, members: members.map(({ host, port }) => ({ host, port })), monitor },
  };
}

t.test('a service balances round robin over its pool; status shows where it listens and its pool', async (t) => {
  const [a, b] = [await startHttpMember(t, 'a'), await startHttpMember(t, 'b')];
  const [port] = await freePorts(1);
  const { dataPlane } = startDataPlane(t);
  t.same(await dataPlane.apply([service('/T/A/web', port!, [a, b])]), { ok: true });
  const bodies = [];
  for (let i = 0; i < 4; i++) bodies.push(await bodyThrough(port!));
  t.same(bodies, ['a', 'b', 'a', 'b']);
  const status = dataPlane.status()['/T/A/web']!;
  t.same(status.addresses, [{ address: '127.0.0.1', port: port!, bound: true, url: `http://127.0.0.1:${port}` }]);
  t.match(
    status.pool,
    { name: '/T/A/web_pool', membersUp: 2, members: [{ state: 'unchecked' }, { state: 'unchecked' }] },
    'no monitor: members stay unchecked, in rotation',
  );
});

t.test("the pool's http monitor takes a member whose health probe answers 500 out of rotation, and back", async (t) => {
  const [a, b] = [await startHttpMember(t, 'a'), await startHttpMember(t, 'b')];
  b.setHealth(500);
  const [port] = await freePorts(1);
  const { dataPlane, clock } = startDataPlane(t);
  await dataPlane.apply([service('/T/A/web', port!, [a, b], 'http')]);
  const states = () => dataPlane.status()['/T/A/web']!.pool.members.map((m) => m.state);
  t.ok(await waitFor(() => states().join() === 'up,down'), 'probed at once: a up, b down');
  t.same([await bodyThrough(port!), await bodyThrough(port!), await bodyThrough(port!)], ['a', 'a', 'a']);
  b.setHealth(200);
  await clock.advanceAsync(5000);
  t.ok(await waitFor(() => states().join() === 'up,up'), 'the next probe, 5 s later, brings b back');
  t.same([await bodyThrough(port!), await bodyThrough(port!)].sort(), ['a', 'b']);
});

t.test(
  'applying an unchanged service again leaves its listener alone: the request in flight and the keep-alive connection go on',
  async (t) => {
    const member = await startHeldMember(t, 'held');
    const [port] = await freePorts(1);
    const { dataPlane } = startDataPlane(t);
    const spec = service('/T/A/web', port!, [member], 'http');
    await dataPlane.apply([spec]);
    const state = () => dataPlane.status()['/T/A/web']!.pool.members[0]!.state;
    t.ok(await waitFor(() => state() === 'up'));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const inFlight = through(port!, { agent });
    await member.holding();
    t.same(await dataPlane.apply([structuredClone(spec)]), { ok: true });
    t.equal(state(), 'up', 'the same pool, its monitor state kept (a new pool would start unchecked)');
    member.release();
    t.match(await inFlight, { status: 200, body: 'held' }, 'the request in flight is answered');
    const next = through(port!, { agent });
    await member.holding();
    member.release();
    t.match(await next, { status: 200, reusedSocket: true }, 'the next request goes on the same connection');
  },
);

t.test('a changed pool on the same address takes over the listener: the request in flight ends on the old pool', async (t) => {
  const [held, fresh] = [await startHeldMember(t, 'held'), await startHttpMember(t, 'fresh')];
  const [port] = await freePorts(1);
  const { dataPlane } = startDataPlane(t);
  await dataPlane.apply([service('/T/A/web', port!, [held])]);
  const inFlight = through(port!);
  await held.holding();
  t.same(await dataPlane.apply([service('/T/A/web', port!, [fresh])]), { ok: true });
  t.equal(await bodyThrough(port!), 'fresh', 'new requests go to the new pool');
  held.release();
  t.match(await inFlight, { status: 200, body: 'held' });
});

t.test('removing a service closes its port at once; its request in flight still completes', async (t) => {
  const member = await startHeldMember(t, 'held');
  const [port] = await freePorts(1);
  const { dataPlane } = startDataPlane(t);
  await dataPlane.apply([service('/T/A/web', port!, [member])]);
  const inFlight = through(port!);
  await member.holding();
  t.same(await dataPlane.apply([]), { ok: true });
  t.equal(await through(port!), 'refused', 'new connections are refused');
  t.same(dataPlane.status(), {});
  member.release();
  t.match(await inFlight, { status: 200, body: 'held' }, 'no request is dropped');
});

t.test('a listener that cannot be bound fails the apply and changes nothing', async (t) => {
  const member = await startHttpMember(t, 'a');
  const [running, taken, other, moved] = await freePorts(4);
  const { dataPlane } = startDataPlane(t);
  await dataPlane.apply([service('/T/A/running', running!, [member])]);
  await occupy(t, taken!);
  const outcome = await dataPlane.apply([
    service('/T/A/running', moved!, [member]),
    service('/T/A/taken', taken!, [member]),
    service('/T/A/other', other!, [member]),
  ]);
  t.same(outcome, { ok: false, failures: [{ key: '/T/A/taken', address: '127.0.0.1', port: taken!, reason: 'address in use' }] });
  t.equal(await bodyThrough(running!), 'a', 'the running service still serves where it was');
  t.same([await through(moved!), await through(other!)], ['refused', 'refused'], 'the listeners bound for the failed apply are closed');
  t.same(Object.keys(dataPlane.status()), ['/T/A/running']);
});

t.test('addresses that are not loopback, and ports past 65535, are kept and shown as not bound', async (t) => {
  const [port] = await freePorts(1);
  const { dataPlane } = startDataPlane(t);
  const spec = { ...service('/T/A/web', port!, []), addresses: ['10.0.1.10%2', '127.0.0.1%2'] };
  const high = { ...service('/T/A/high', 0, []), port: 60_000 };
  t.same(await dataPlane.apply([spec, high]), { ok: true });
  t.same(dataPlane.status()['/T/A/web']!.addresses, [
    {
      address: '10.0.1.10%2',
      port: port!,
      bound: false,
      reason: 'not a loopback address: only 127.0.0.0/8 (also IPv4-mapped) and ::1 are bound on this device',
    },
    { address: '127.0.0.1%2', port: port!, bound: true, url: `http://127.0.0.1:${port}` },
  ]);
  t.match(dataPlane.status()['/T/A/high']!.addresses, [{ bound: false, port: 70_000, reason: /outside 1-65535/ }]);
  t.match(await through(port!), { status: 503 }, 'a service without members answers 503');
});

t.test('qlogging on, requests, off: trace0.qlog parses and holds connections and requests, never headers, bodies or queries', async (t) => {
  const member = await startHttpMember(t, 'a');
  const [port, empty] = await freePorts(2);
  const { dataPlane, dataDir } = startDataPlane(t);
  await dataPlane.apply([service('/T/A/web', port!, [member]), service('/T/A/empty', empty!, [])]);
  await dataPlane.setQlogging(true);
  const file = join(dataDir, 'trace0.qlog');
  const closedConnections = () => (existsSync(file) ? readFileSync(file, 'utf8').split('transport:connection_closed').length - 1 : 0);
  await through(port!, {
    method: 'POST',
    path: '/p?q=query-secret',
    headers: { 'x-secret': 'header-secret', 'content-type': 'text/plain' },
    body: 'body-secret',
  });
  t.ok(await waitFor(() => closedConnections() === 1), 'its connection closed (each request has its own)');
  await through(empty!, { path: '/none' });
  t.ok(await waitFor(() => closedConnections() === 2));
  await dataPlane.setQlogging(false);

  const text = readFileSync(file, 'utf8');
  const events = (JSON.parse(text) as { traces: { events: { name: string; data: Record<string, unknown> }[] }[] }).traces[0]!.events;
  t.same(
    events.map((e) => e.name),
    [
      'transport:connection_started',
      'http:request',
      'transport:connection_closed',
      'transport:connection_started',
      'http:request_failed',
      'transport:connection_closed',
    ],
  );
  t.match(events[1]!.data, {
    service: '/T/A/web',
    method: 'POST',
    path: '/p',
    status: 200,
    member: `127.0.0.1:${member.port}`,
    bytes_in: Number,
    bytes_out: Number,
    duration_ms: 0,
  });
  t.match(events[4]!.data, { service: '/T/A/empty', path: '/none', status: 503, reason: 'no_member' });
  t.match(events[0]!.data, { src_ip: '127.0.0.1', src_port: Number, dst_ip: '127.0.0.1', dst_port: port });
  for (const secret of ['query-secret', 'header-secret', 'body-secret', 'x-secret'])
    t.notOk(text.includes(secret), `no ${secret} in the trace`);
  t.equal(member.received[0]!.headers['x-secret'], 'header-secret', 'while the member did get the header');
});

t.test('access logging and the event level switch at runtime', async (t) => {
  const member = await startHttpMember(t, 'a');
  const [port] = await freePorts(1);
  const logs = captureLogs('info');
  const { dataPlane } = startDataPlane(t, logs.logger);
  await dataPlane.apply([service('/T/A/web', port!, [member])]);
  const messages = async () => {
    logs.lines.length = 0;
    await through(port!, { path: '/x?k=v' });
    return logs.lines.map((line) => (JSON.parse(line) as { msg: string }).msg).filter((msg) => !msg.startsWith('connection'));
  };
  t.same(await messages(), [], 'off by default');
  dataPlane.setAccessLogging(true);
  t.same(await messages(), ['access']);
  t.match(JSON.parse(logs.lines.find((line) => line.includes('"access"'))!), {
    service: '/T/A/web',
    method: 'GET',
    path: '/x',
    status: 200,
    member: `127.0.0.1:${member.port}`,
  });
  dataPlane.setAccessLogging(false);
  dataPlane.setEventLevel('Info');
  t.same(await messages(), ['request']);
  dataPlane.setEventLevel('Critical');
  t.same(await messages(), []);
});

t.test('applies run one after the other: the last one called is what runs', async (t) => {
  const [a, b] = [await startHttpMember(t, 'a'), await startHttpMember(t, 'b')];
  const [pa, pb] = await freePorts(2);
  const { dataPlane } = startDataPlane(t);
  const outcomes = await Promise.all([dataPlane.apply([service('/T/A/a', pa!, [a])]), dataPlane.apply([service('/T/A/b', pb!, [b])])]);
  t.same(outcomes, [{ ok: true }, { ok: true }]);
  t.same([await bodyThrough(pa!), await bodyThrough(pb!)], ['refused', 'b']);
});

t.test('the number of listeners is bounded: past it a service fails to apply and nothing changes', async (t) => {
  const clock = createFakeClock();
  const plane = createDataPlane({
    portOffset: 0,
    clock,
    timers: clock,
    logger: createLogger({ level: 'silent' }),
    dataDir: '/nonexistent',
    maxListeners: 1,
  });
  t.teardown(() => plane.close());
  const [p1, p2] = (await freePorts(2)) as [number, number];
  const spec = (key: string, port: number) => ({
    key,
    addresses: ['127.0.0.1'],
    port,
    pool: { key: `${key}/pool`, members: [], monitor: null },
  });
  t.same(await plane.apply([spec('/T/A/one', p1)]), { ok: true });
  const refused = await plane.apply([spec('/T/A/one', p1), spec('/T/A/two', p2)]);
  t.match(refused, { ok: false, failures: [{ key: '/T/A/two', reason: /too many listeners on this device \(at most 1\)/ }] });
  t.same(Object.keys(plane.status()), ['/T/A/one'], 'the service that fitted keeps running alone');
});
