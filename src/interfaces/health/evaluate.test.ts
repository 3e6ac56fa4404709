import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import { evaluateHealth } from './evaluate.ts';

const clock = createFakeClock(Date.parse('2026-03-01T12:00:00Z'));
const up = async () => ({ ok: true as const });
const down = async () => ({ ok: false as const, reason: 'refused' });
const hang = () => new Promise<never>(() => {});

t.test('all checks up: healthy, connected, available, ISO timestamp', async (t) => {
  t.same(await evaluateHealth({ database: up, services: [up] }, { clock, timeoutMs: 100, draining: false }), {
    ok: true,
    value: { status: 'healthy', database: 'connected', services: 'available', timestamp: '2026-03-01T12:00:00.000Z' },
  });
});

t.test('a failing dependency: unhealthy naming which side failed', async (t) => {
  t.match(await evaluateHealth({ database: down, services: [up] }, { clock, timeoutMs: 100, draining: false }), {
    ok: true,
    value: { status: 'unhealthy', database: 'disconnected', services: 'available' },
  });
  t.match(await evaluateHealth({ database: up, services: [up, down] }, { clock, timeoutMs: 100, draining: false }), {
    ok: true,
    value: { status: 'unhealthy', database: 'connected', services: 'unavailable' },
  });
});

t.test('a check that hangs is cut at the timeout: the answer still comes', async (t) => {
  const timers = createFakeClock(Date.parse('2026-03-01T12:00:00Z'));
  let verdict: Awaited<ReturnType<typeof evaluateHealth>> | undefined;
  const answered = evaluateHealth({ database: hang, services: [hang] }, { clock, timeoutMs: 80, draining: false, timers }).then(
    (v) => (verdict = v),
  );
  await timers.advanceAsync(79);
  t.equal(verdict, undefined, 'no answer before the timeout');
  await timers.advanceAsync(1);
  await answered;
  t.match(
    verdict,
    { ok: true, value: { status: 'unhealthy', database: 'disconnected', services: 'unavailable' } },
    'at the timeout: unhealthy, both sides down',
  );
});

t.test('a check that throws is an unexpected failure: internal, with a message', async (t) => {
  const broken = async () => {
    throw new Error('pool exhausted');
  };
  t.same(await evaluateHealth({ database: broken, services: [] }, { clock, timeoutMs: 100, draining: false }), {
    ok: false,
    error: { code: 'internal', message: 'Health check failed: pool exhausted' },
  });
});

t.test('a draining role is unhealthy even with every check up', async (t) => {
  t.match(await evaluateHealth({ database: up, services: [] }, { clock, timeoutMs: 100, draining: true }), {
    ok: true,
    value: { status: 'unhealthy', services: 'unavailable' },
  });
});
