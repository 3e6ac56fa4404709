import t from 'tap';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createFakeClock } from '../../lib/clock.ts';
import { createLogger } from '../../lib/logger.ts';
import { createSpecValidator } from '../../lib/spec-ajv.ts';
import { loadSpec } from '../../lib/spec-catalog.ts';
import { createPool, type StateChange } from './pool.ts';
import { registerPoolMetrics } from './pool-metrics.ts';
import { createProxy } from './proxy.ts';
import { closedPort, sleep, startGateway, startHttpMember, startRawServer, waitFor } from './test-servers.ts';

const validatePoolStatus = createSpecValidator(loadSpec('health')).at('/components/schemas/PoolStatus');
const silent = createLogger({ level: 'silent' });

/** A logger whose JSON lines are kept, to count what was logged. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

t.test('members start unchecked and in rotation; pick() takes them in turn', async (t) => {
  const pool = createPool({
    name: 'mapping',
    members: [{ host: '127.0.0.1', port: 1001 }, { host: '127.0.0.1', port: 1002 }, { host: '::1', port: 1003 }],
    clock: createFakeClock(),
  });
  t.same(pool.members.map((m) => m.address), ['127.0.0.1:1001', '127.0.0.1:1002', '[::1]:1003']);
  t.same(Array.from({ length: 7 }, () => pool.pick()?.port), [1001, 1002, 1003, 1001, 1002, 1003, 1001]);
  const status = pool.status();
  t.ok(validatePoolStatus(status), `PoolStatus: ${JSON.stringify(validatePoolStatus.errors)}`);
  t.same(status, {
    name: 'mapping',
    monitor: { interval: 5, timeout: 16, timeUntilUp: 0, receive: '200', send: 'GET /health HTTP/1.1\r\nHost: 127.0.0.1:1001\r\nConnection: close\r\n\r\n' },
    membersUp: 3,
    members: [
      { address: '127.0.0.1:1001', state: 'unchecked' },
      { address: '127.0.0.1:1002', state: 'unchecked' },
      { address: '[::1]:1003', state: 'unchecked' },
    ],
  }, 'the seed\'s monitor settings by default');
  t.equal(createPool({ name: 'empty', members: [], clock: createFakeClock() }).pick(), undefined, 'no member: undefined');
});

t.test('monitor settings out of range are refused with a clear message', async (t) => {
  const base = { name: 'p', members: [], clock: createFakeClock() };
  t.throws(() => createPool({ ...base, monitor: { intervalMs: 0 } }), /monitor intervalMs must be a positive number/);
  t.throws(() => createPool({ ...base, monitor: { timeoutMs: -1 } }), /monitor timeoutMs must be a positive number/);
  t.throws(() => createPool({ ...base, monitor: { timeUntilUpMs: Number.NaN } }), /timeUntilUpMs must be a non-negative/);
});

t.test('a member whose /health turns 503 leaves rotation within one interval and returns on 200', async (t) => {
  const a = await startHttpMember(t, 'a');
  const b = await startHttpMember(t, 'b');
  const changes: (StateChange & { at: number })[] = [];
  const intervalMs = 80;
  const pool = createPool({
    name: 'mapping', members: [a, b], monitor: { intervalMs, timeoutMs: 500 }, clock: createFakeClock(),
    onStateChange: (change) => changes.push({ ...change, at: performance.now() }),
  });
  const proxy = createProxy({ pool, upstreamTimeoutMs: 2000, connectionsPerMember: 4, logger: silent });
  t.teardown(() => proxy.close());
  t.teardown(() => pool.stop());
  const gateway = await startGateway(t, proxy);
  const sendRequests = async (n: number) => {
    const names: string[] = [];
    for (let i = 0; i < n; i++) names.push(await (await fetch(`${gateway.url}/api/charts`)).text());
    return names;
  };

  pool.start();
  t.ok(await waitFor(() => pool.status().members.every((m) => m.state === 'up'), 1000), 'both up after the first probes');
  t.same(
    changes.map((c) => `${c.member.port} ${c.from} -> ${c.to}`).sort(),
    [`${a.port} unchecked -> up`, `${b.port} unchecked -> up`].sort(),
    'one change each',
  );
  const before = await sendRequests(10);
  t.same([before.filter((n) => n === 'a').length, before.filter((n) => n === 'b').length], [5, 5], 'traffic shared in turn');

  const flipped = performance.now();
  b.setHealth(503);
  t.ok(await waitFor(() => changes.some((c) => c.to === 'down'), 1000), 'b marked down');
  const down = changes.find((c) => c.to === 'down')!;
  t.match(down, { member: { port: b.port }, from: 'up', to: 'down', status: 503, reason: 'HTTP status 503' });
  t.ok(down.at - flipped <= intervalMs + 100, `down ${Math.round(down.at - flipped)} ms after /health turned 503 (interval ${intervalMs} ms)`);
  const bBefore = b.received.length;
  t.same(await sendRequests(10), Array(10).fill('a'), 'every request goes to a');
  t.equal(b.received.length, bBefore, 'b receives nothing while down');
  t.match(pool.status(), { membersUp: 1, members: [{ state: 'up' }, { state: 'down', lastStatus: 503, reason: 'HTTP status 503' }] });

  b.setHealth(200);
  t.ok(await waitFor(() => pool.status().members[1]!.state === 'up', intervalMs + 500), 'b up again on its next 200');
  const after = await sendRequests(10);
  t.equal(after.filter((n) => n === 'b').length, 5, 'b back in rotation');
  t.equal(changes.length, 4, 'each change reported once');
});

t.test('status() matches the PoolStatus schema in every state, with the clock\'s times', async (t) => {
  const up = await startHttpMember(t, 'up');
  const sick = await startHttpMember(t, 'sick');
  sick.setHealth(500);
  const refused = await closedPort();
  const clock = createFakeClock(Date.parse('2025-03-14T09:26:53.589Z'));
  const pool = createPool({
    name: 'mapping', members: [up, sick, { host: '127.0.0.1', port: refused }],
    monitor: { intervalMs: 60_000, timeoutMs: 1000, timeUntilUpMs: 0 }, clock,
  });
  t.teardown(() => pool.stop());
  t.ok(validatePoolStatus(pool.status()), 'unchecked');
  pool.start();
  t.ok(await waitFor(() => pool.status().members.every((m) => m.state !== 'unchecked'), 1000), 'all probed');
  const status = pool.status();
  t.ok(validatePoolStatus(status), `after probes: ${JSON.stringify(validatePoolStatus.errors)}`);
  const at = '2025-03-14T09:26:53.589Z';
  t.same(status.members, [
    { address: `127.0.0.1:${up.port}`, state: 'up', lastStatus: 200, lastChange: at, lastProbe: at },
    { address: `127.0.0.1:${sick.port}`, state: 'down', lastStatus: 500, reason: 'HTTP status 500', lastChange: at, lastProbe: at },
    { address: `127.0.0.1:${refused}`, state: 'down', lastStatus: null, reason: 'connection refused', lastChange: at, lastProbe: at },
  ]);
  t.equal(status.membersUp, 1);
  t.same(status.monitor, { interval: 60, timeout: 1, timeUntilUp: 0, receive: '200', send: `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nConnection: close\r\n\r\n` });
});

t.test('at most one probe per member is in flight; a hung member is down after the timeout', async (t) => {
  const hung = await startRawServer(t, (socket) => socket.resume());
  const pool = createPool({ name: 'p', members: [hung], monitor: { intervalMs: 20, timeoutMs: 250 }, clock: createFakeClock() });
  t.teardown(() => pool.stop());
  pool.start();
  await sleep(200);
  t.equal(hung.connections(), 1, 'the probe waits; no pile-up while the member hangs');
  t.equal(pool.status().members[0]!.state, 'unchecked', 'not down before the timeout');
  t.ok(await waitFor(() => pool.status().members[0]!.state === 'down', 500), 'down after the timeout');
  t.match(pool.status().members[0], { lastStatus: null, reason: 'no answer within 250 ms' });
  t.ok(hung.connections() <= 2, `${hung.connections()} connections in about ${Math.round(250 + 20)} ms`);
  t.ok(hung.sockets.size <= 1, 'timed-out probes closed their sockets');
});

t.test('stop() cancels probes in flight, closes their sockets and probes no more', async (t) => {
  const hung = await startRawServer(t, (socket) => socket.resume());
  const pool = createPool({ name: 'p', members: [hung], monitor: { intervalMs: 20, timeoutMs: 10_000 }, clock: createFakeClock() });
  pool.start();
  t.ok(await waitFor(() => hung.sockets.size === 1, 1000), 'probing');
  await pool.stop();
  t.ok(await waitFor(() => hung.sockets.size === 0, 1000), 'socket closed');
  const connections = hung.connections();
  await sleep(100);
  t.equal(hung.connections(), connections, 'no probe after stop');
  t.equal(pool.status().members[0]!.state, 'unchecked', 'a cancelled probe changes nothing');
});

t.test('time-until-up keeps a member out until it has answered 200 for that long', async (t) => {
  const member = await startHttpMember(t, 'm');
  member.setHealth(503);
  const clock = createFakeClock();
  const pool = createPool({ name: 'p', members: [member], monitor: { intervalMs: 20, timeoutMs: 500, timeUntilUpMs: 10_000 }, clock });
  t.teardown(() => pool.stop());
  pool.start();
  t.ok(await waitFor(() => pool.status().members[0]!.state === 'down', 1000), 'down');
  member.setHealth(200);
  const probes = member.connections();
  t.ok(await waitFor(() => member.connections() >= probes + 3, 1000), 'several healthy answers');
  t.equal(pool.status().members[0]!.state, 'down', 'still down: healthy for 0 s of 10 s');
  t.equal(pool.pick(), undefined, 'out of rotation');
  clock.advance(9_999);
  await waitFor(() => member.connections() >= probes + 5, 1000);
  t.equal(pool.status().members[0]!.state, 'down', 'still down at 9.999 s');
  clock.advance(1);
  t.ok(await waitFor(() => pool.status().members[0]!.state === 'up', 1000), 'up once healthy for 10 s');
  t.equal(pool.pick()?.port, member.port);
});

t.test('a failure restarts the time-until-up wait', async (t) => {
  const member = await startHttpMember(t, 'm');
  const clock = createFakeClock();
  const pool = createPool({ name: 'p', members: [member], monitor: { intervalMs: 20, timeoutMs: 500, timeUntilUpMs: 1000 }, clock });
  t.teardown(() => pool.stop());
  pool.start();
  await waitFor(() => member.connections() >= 2, 1000);
  clock.advance(600);
  member.setHealth(503);
  t.ok(await waitFor(() => pool.status().members[0]!.state === 'down', 1000), 'down on a 503');
  member.setHealth(200);
  await waitFor(() => member.connections() >= 6, 1000);
  clock.advance(600);
  await waitFor(() => member.connections() >= 8, 1000);
  t.equal(pool.status().members[0]!.state, 'down', 'the 600 ms before the failure do not count');
  clock.advance(400);
  t.ok(await waitFor(() => pool.status().members[0]!.state === 'up', 1000), 'up after 1000 ms of healthy answers');
});

t.test('each state change is logged once, with the member, old and new state and the reason', async (t) => {
  const member = await startHttpMember(t, 'm');
  const { lines, logger } = capturingLogger();
  const pool = createPool({ name: 'mapping', members: [member], monitor: { intervalMs: 15, timeoutMs: 500 }, clock: createFakeClock(), logger });
  t.teardown(() => pool.stop());
  pool.start();
  await waitFor(() => member.connections() >= 4, 1000);
  member.setHealth(503);
  await waitFor(() => pool.status().members[0]!.state === 'down', 1000);
  const probes = member.connections();
  await waitFor(() => member.connections() >= probes + 4, 1000);
  const address = `127.0.0.1:${member.port}`;
  t.same(lines.map((l) => [l.msg, l.pool, l.member, l.from, l.to, l.reason]), [
    ['pool member up', 'mapping', address, 'unchecked', 'up', 'HTTP status 200'],
    ['pool member down', 'mapping', address, 'up', 'down', 'HTTP status 503'],
  ], 'two changes, two lines, however many probes');
  t.same(lines.map((l) => l.level), [30, 40], 'up at info, down at warn');
});

t.test('metrics: member up gauge (unchecked counts as in rotation) and state-change counter, current at each scrape', async (t) => {
  const healthy = await startHttpMember(t, 'h');
  const sick = await startHttpMember(t, 's');
  sick.setHealth(503);
  const registry = new Registry();
  const mapping = createPool({ name: 'mapping', members: [healthy, sick], monitor: { intervalMs: 20, timeoutMs: 500 }, clock: createFakeClock() });
  const other = createPool({ name: 'other', members: [{ host: '127.0.0.1', port: 9 }], clock: createFakeClock() });
  registerPoolMetrics(registry, mapping);
  registerPoolMetrics(registry, other);
  t.teardown(() => mapping.stop());
  const h = `127.0.0.1:${healthy.port}`;
  const s = `127.0.0.1:${sick.port}`;
  let text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 1`, 'unchecked: 1');
  t.match(text, 'portolan_pool_member_up{pool="other",member="127.0.0.1:9"} 1', 'a second pool in the same registry');
  mapping.start();
  await waitFor(() => mapping.status().members[1]!.state === 'down', 1000);
  text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${h}"} 1`);
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 0`, 'down: 0');
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${s}",state="down"} 1`);
  sick.setHealth(200);
  await waitFor(() => mapping.status().members[1]!.state === 'up', 1000);
  text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 1`, 'up again: 1');
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${s}",state="up"} 1`);
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${h}",state="up"} 1`);
  t.notMatch(text, /state="unchecked"/, 'nothing ever enters unchecked');
});
