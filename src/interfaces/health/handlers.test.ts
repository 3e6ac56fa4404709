import t from 'tap';
import { startTestSystem } from '../../app/test-system.ts';
import { createFakeClock } from '../../lib/clock.ts';
import { createHealthHandlers } from './handlers.ts';

// The handler's side of /health (evaluate.test.ts has the checks): healthy is the 200, unhealthy the
// spec's 503 health document, a check that throws the 500 in the health shape; every answer uncached.
// Response checking is on in the test system: each answer is also checked against specs/health.yaml.

const up = async () => ({ ok: true as const });
const down = async () => ({ ok: false as const, reason: 'refused' });
const broken = async (): Promise<never> => {
  throw new Error('pool exhausted');
};

t.test('GET /health maps the checks to 200, 503 and 500, none of them cached', async (t) => {
  let database: () => Promise<{ ok: true } | { ok: false; reason: string }> = up;
  const clock = createFakeClock(Date.parse('2026-03-01T12:00:00Z'));
  const handlers = createHealthHandlers({
    checksFor: () => ({ database: () => database(), services: [] }),
    clock,
    timeoutMs: 1000,
    isDraining: () => false,
  });
  const { system, clock: systemClock } = await startTestSystem(t, { handlers: { health: handlers } });
  const health = async () => {
    const response = await fetch(`${system.url('mapping')}/health`);
    return { status: response.status, cache: response.headers.get('cache-control'), body: await response.json() };
  };
  const timestamp = '2026-03-01T12:00:00.000Z';

  t.same(await health(), {
    status: 200,
    cache: 'no-store',
    body: { status: 'healthy', database: 'connected', services: 'available', timestamp },
  });
  database = down;
  t.same(await health(), {
    status: 503,
    cache: 'no-store',
    body: { status: 'unhealthy', database: 'disconnected', services: 'available', timestamp },
  });
  database = broken;
  t.same(await health(), {
    status: 500,
    cache: 'no-store',
    // The failure is rendered by the module's error shape, on the system's clock.
    body: { status: 'error', message: 'Health check failed: pool exhausted', timestamp: systemClock.now().toISOString() },
  });
});
