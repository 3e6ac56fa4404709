import t from 'tap';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createFakeClock } from '../lib/clock.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { loadSpec } from '../lib/spec-catalog.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { createPool, type PoolOptions, type StateChange } from './pool.ts';
import { registerPoolMetrics } from './pool-metrics.ts';
import { probeHealth, type ProbeResult } from './probe.ts';
import { createProxy } from './proxy.ts';
import { closedPort, startGateway, startHttpMember, startRawServer, waitFor } from './test-servers.ts';

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

/** The seed's monitor: a probe every 5 s, down after 16 s without an answer. */
const SEED_MONITOR = { intervalMs: 5000, timeoutMs: 16_000 };

/**
 * A pool monitored on a fake clock, over real sockets: the probes are the real ones, counted as they
 * start; `settled()` waits until every probe started so far has answered and been applied.
 */
function monitoredPool(
  t: TapTest,
  members: PoolOptions['members'],
  monitor: PoolOptions['monitor'],
  extra: { onStateChange?: PoolOptions['onStateChange']; logger?: Logger; clock?: ReturnType<typeof createFakeClock> } = {},
) {
  const clock = extra.clock ?? createFakeClock();
  const started: Promise<ProbeResult>[] = [];
  const pool = createPool({
    name: 'mapping',
    members,
    monitor,
    clock,
    timers: clock,
    logger: extra.logger,
    onStateChange: extra.onStateChange,
    probe: (member, options) => {
      const probing = probeHealth(member, options);
      started.push(probing);
      return probing;
    },
  });
  t.teardown(() => pool.stop());
  return {
    pool,
    clock,
    probes: () => started.length,
    // The pool applies a result in its own reaction to the probe, registered before this one.
    settled: async () => void (await Promise.all(started)),
    state: (index = 0) => pool.status().members[index]!.state,
  };
}

t.test('members start unchecked and in rotation; pick() takes them in turn', async (t) => {
  const pool = createPool({
    name: 'mapping',
    members: [
      { host: '127.0.0.1', port: 1001 },
      { host: '127.0.0.1', port: 1002 },
      { host: '::1', port: 1003 },
    ],
    clock: createFakeClock(),
  });
  t.same(
    pool.members.map((m) => m.address),
    ['127.0.0.1:1001', '127.0.0.1:1002', '[::1]:1003'],
  );
  t.same(
    Array.from({ length: 7 }, () => pool.pick()?.port),
    [1001, 1002, 1003, 1001, 1002, 1003, 1001],
  );
  const status = pool.status();
  t.ok(validatePoolStatus(status), `PoolStatus: ${JSON.stringify(validatePoolStatus.errors)}`);
  t.same(
    status,
    {
      name: 'mapping',
      monitor: {
        interval: 5,
        timeout: 16,
        timeUntilUp: 0,
        receive: '200',
        send: 'GET /health HTTP/1.1\r\nHost: 127.0.0.1:1001\r\nConnection: close\r\n\r\n',
      },
      membersUp: 3,
      members: [
        { address: '127.0.0.1:1001', state: 'unchecked' },
        { address: '127.0.0.1:1002', state: 'unchecked' },
        { address: '[::1]:1003', state: 'unchecked' },
      ],
    },
    "the seed's monitor settings by default",
  );
  t.equal(createPool({ name: 'empty', members: [], clock: createFakeClock() }).pick(), undefined, 'no member: undefined');
});

t.test('monitor settings out of range are refused with a clear message', async (t) => {
  const base = { name: 'p', members: [], clock: createFakeClock() };
  t.throws(() => createPool({ ...base, monitor: { intervalMs: 0 } }), /monitor intervalMs must be a positive number/);
  t.throws(() => createPool({ ...base, monitor: { timeoutMs: -1 } }), /monitor timeoutMs must be a positive number/);
  t.throws(() => createPool({ ...base, monitor: { timeUntilUpMs: Number.NaN } }), /timeUntilUpMs must be a non-negative/);
});

t.test('a member whose /health turns 503 leaves rotation at the next probe, one interval later, and returns on 200', async (t) => {
  const a = await startHttpMember(t, 'a');
  const b = await startHttpMember(t, 'b');
  const changes: StateChange[] = [];
  const { pool, clock, probes, settled } = monitoredPool(t, [a, b], SEED_MONITOR, { onStateChange: (change) => changes.push(change) });
  const proxy = createProxy({ pool, upstreamTimeoutMs: 30_000, connectionsPerMember: 4, logger: silent, timers: clock });
  t.teardown(() => proxy.close());
  const gateway = await startGateway(t, proxy);
  const sendRequests = async (n: number) => {
    const names: string[] = [];
    for (let i = 0; i < n; i++) names.push(await (await fetch(`${gateway.url}/api/charts`)).text());
    return names;
  };

  pool.start();
  t.equal(probes(), 2, 'both probed at once');
  await settled();
  t.same(
    pool.status().members.map((m) => m.state),
    ['up', 'up'],
    'both up after the first probes',
  );
  t.same(
    changes.map((c) => `${c.member.port} ${c.from} -> ${c.to}`).sort(),
    [`${a.port} unchecked -> up`, `${b.port} unchecked -> up`].sort(),
    'one change each',
  );
  const before = await sendRequests(10);
  t.same([before.filter((n) => n === 'a').length, before.filter((n) => n === 'b').length], [5, 5], 'traffic shared in turn');

  b.setHealth(503);
  await clock.advanceAsync(4999);
  t.equal(probes(), 2, 'no probe before the interval has passed');
  t.equal(pool.status().members[1]!.state, 'up', 'so b is still up');
  await clock.advanceAsync(1);
  t.equal(probes(), 4, 'one probe per member at 5 s');
  await settled();
  const down = changes.filter((c) => c.to === 'down');
  t.equal(down.length, 1, 'b marked down by that probe');
  t.match(down[0], { member: { port: b.port }, from: 'up', to: 'down', status: 503, reason: 'HTTP status 503' });
  const bBefore = b.received.length;
  t.same(await sendRequests(10), Array(10).fill('a'), 'every request goes to a');
  t.equal(b.received.length, bBefore, 'b receives nothing while down');
  t.match(pool.status(), { membersUp: 1, members: [{ state: 'up' }, { state: 'down', lastStatus: 503, reason: 'HTTP status 503' }] });

  b.setHealth(200);
  await clock.advanceAsync(5000);
  await settled();
  t.equal(pool.status().members[1]!.state, 'up', 'b up again on its next 200');
  const after = await sendRequests(10);
  t.equal(after.filter((n) => n === 'b').length, 5, 'b back in rotation');
  t.equal(changes.length, 4, 'each change reported once');
});

t.test("status() matches the PoolStatus schema in every state, with the clock's times", async (t) => {
  const up = await startHttpMember(t, 'up');
  const sick = await startHttpMember(t, 'sick');
  sick.setHealth(500);
  const refused = await closedPort();
  const clock = createFakeClock(Date.parse('2025-03-14T09:26:53.589Z'));
  const { pool, settled } = monitoredPool(
    t,
    [up, sick, { host: '127.0.0.1', port: refused }],
    { intervalMs: 60_000, timeoutMs: 1000, timeUntilUpMs: 0 },
    { clock },
  );
  t.ok(validatePoolStatus(pool.status()), 'unchecked');
  pool.start();
  await settled();
  t.ok(
    pool.status().members.every((m) => m.state !== 'unchecked'),
    'all probed',
  );
  const status = pool.status();
  t.ok(validatePoolStatus(status), `after probes: ${JSON.stringify(validatePoolStatus.errors)}`);
  const at = '2025-03-14T09:26:53.589Z';
  t.same(status.members, [
    { address: `127.0.0.1:${up.port}`, state: 'up', lastStatus: 200, lastChange: at, lastProbe: at },
    { address: `127.0.0.1:${sick.port}`, state: 'down', lastStatus: 500, reason: 'HTTP status 500', lastChange: at, lastProbe: at },
    { address: `127.0.0.1:${refused}`, state: 'down', lastStatus: null, reason: 'connection refused', lastChange: at, lastProbe: at },
  ]);
  t.equal(status.membersUp, 1);
  t.same(status.monitor, {
    interval: 60,
    timeout: 1,
    timeUntilUp: 0,
    receive: '200',
    send: `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nConnection: close\r\n\r\n`,
  });
});

t.test('at most one probe per member is in flight; a hung member is down after the timeout, not before', async (t) => {
  const hung = await startRawServer(t, (socket) => socket.resume()); // reads, never answers
  const { pool, clock, probes, state } = monitoredPool(t, [hung], SEED_MONITOR);
  pool.start();
  t.ok(await waitFor(() => hung.connections() === 1), 'the first probe is connected');
  await clock.advanceAsync(15_999);
  t.equal(probes(), 1, 'three intervals passed: no second probe while the first waits');
  t.equal(state(), 'unchecked', 'not down before the timeout');
  await clock.advanceAsync(1);
  t.ok(await waitFor(() => state() === 'down'), 'down at 16 s');
  t.match(pool.status().members[0], { lastStatus: null, reason: 'no answer within 16000 ms' });
  t.equal(probes(), 2, 'the interval that passed meanwhile probes once, right away');
  t.ok(await waitFor(() => hung.connections() === 2 && hung.sockets.size === 1), 'the timed-out probe closed its socket');
});

t.test('stop() cancels probes in flight, closes their sockets and probes no more', async (t) => {
  const hung = await startRawServer(t, (socket) => socket.resume());
  const { pool, clock, probes, state } = monitoredPool(t, [hung], SEED_MONITOR);
  pool.start();
  t.ok(await waitFor(() => hung.sockets.size === 1), 'probing');
  await pool.stop();
  t.ok(await waitFor(() => hung.sockets.size === 0), 'socket closed');
  t.same(clock.pendingTimers(), [], 'no timer left');
  await clock.advanceAsync(60_000);
  t.equal(probes(), 1, 'no probe after stop');
  t.equal(state(), 'unchecked', 'a cancelled probe changes nothing');
});

t.test('time-until-up keeps a member out until it has answered 200 for that long', async (t) => {
  const member = await startHttpMember(t, 'm');
  member.setHealth(503);
  const { pool, clock, settled, state } = monitoredPool(t, [member], { ...SEED_MONITOR, timeUntilUpMs: 10_000 });
  pool.start();
  await settled();
  t.equal(state(), 'down', 'down on a 503');
  member.setHealth(200);
  await clock.advanceAsync(5000);
  await settled();
  t.equal(state(), 'down', 'healthy for 0 s of 10 s: still down');
  t.equal(pool.pick(), undefined, 'out of rotation');
  await clock.advanceAsync(5000);
  await settled();
  t.equal(state(), 'down', 'healthy for 5 s: still down');
  await clock.advanceAsync(5000);
  await settled();
  t.equal(state(), 'up', 'up once healthy for 10 s');
  t.equal(pool.pick()?.port, member.port);
});

t.test('a failure restarts the time-until-up wait', async (t) => {
  const member = await startHttpMember(t, 'm');
  const { pool, clock, settled, state } = monitoredPool(t, [member], { ...SEED_MONITOR, timeUntilUpMs: 10_000 });
  const probeAt = async (seconds: number) => {
    await clock.advanceAsync(seconds * 1000 - (clock.nowMs() - started));
    await settled();
    return state();
  };
  const started = clock.nowMs();
  pool.start();
  await settled();
  t.equal(state(), 'unchecked', '0 s: a first 200, healthy for 0 s');
  t.equal(await probeAt(5), 'unchecked', '5 s: healthy for 5 s');
  member.setHealth(503);
  t.equal(await probeAt(10), 'down', '10 s: a 503');
  member.setHealth(200);
  t.equal(await probeAt(15), 'down', '15 s: healthy again, for 0 s');
  t.equal(await probeAt(20), 'down', '20 s: healthy for 5 s (the 5 s before the failure do not count)');
  t.equal(await probeAt(25), 'up', '25 s: healthy for 10 s');
});

t.test('each state change is logged once, with the member, old and new state and the reason', async (t) => {
  const member = await startHttpMember(t, 'm');
  const { lines, logger } = capturingLogger();
  const { pool, clock, settled, state } = monitoredPool(t, [member], SEED_MONITOR, { logger });
  const probeTimes = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await clock.advanceAsync(SEED_MONITOR.intervalMs);
      await settled();
    }
  };
  pool.start();
  await probeTimes(3);
  member.setHealth(503);
  await probeTimes(1);
  t.equal(state(), 'down');
  await probeTimes(3);
  const address = `127.0.0.1:${member.port}`;
  t.same(
    lines.map((l) => [l.msg, l.pool, l.member, l.from, l.to, l.reason]),
    [
      ['pool member up', 'mapping', address, 'unchecked', 'up', 'HTTP status 200'],
      ['pool member down', 'mapping', address, 'up', 'down', 'HTTP status 503'],
    ],
    'two changes, two lines, however many probes',
  );
  t.same(
    lines.map((l) => l.level),
    [30, 40],
    'up at info, down at warn',
  );
});

t.test('metrics: member up gauge (unchecked counts as in rotation) and state-change counter, current at each scrape', async (t) => {
  const healthy = await startHttpMember(t, 'h');
  const sick = await startHttpMember(t, 's');
  sick.setHealth(503);
  const registry = new Registry();
  const { pool: mapping, clock, settled } = monitoredPool(t, [healthy, sick], SEED_MONITOR);
  const other = createPool({ name: 'other', members: [{ host: '127.0.0.1', port: 9 }], clock: createFakeClock() });
  registerPoolMetrics(registry, mapping);
  registerPoolMetrics(registry, other);
  const h = `127.0.0.1:${healthy.port}`;
  const s = `127.0.0.1:${sick.port}`;
  let text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 1`, 'unchecked: 1');
  t.match(text, 'portolan_pool_member_up{pool="other",member="127.0.0.1:9"} 1', 'a second pool in the same registry');
  mapping.start();
  await settled();
  t.equal(mapping.status().members[1]!.state, 'down');
  text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${h}"} 1`);
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 0`, 'down: 0');
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${s}",state="down"} 1`);
  sick.setHealth(200);
  await clock.advanceAsync(SEED_MONITOR.intervalMs);
  await settled();
  t.equal(mapping.status().members[1]!.state, 'up');
  text = await registry.metrics();
  t.match(text, `portolan_pool_member_up{pool="mapping",member="${s}"} 1`, 'up again: 1');
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${s}",state="up"} 1`);
  t.match(text, `portolan_pool_member_state_changes_total{pool="mapping",member="${h}",state="up"} 1`);
  t.notMatch(text, /state="unchecked"/, 'nothing ever enters unchecked');
});
