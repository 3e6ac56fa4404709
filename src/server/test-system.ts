import { pino } from 'pino';
import { loadConfig, type Config } from '../lib/config.ts';
import { createFakeClock } from '../lib/clock.ts';
import { startSystem, type SystemDependencies } from './system.ts';

/**
 * Starts the whole system for a test on ephemeral ports with response validation on, and stops it
 * when the test ends.
 */
export async function startTestSystem(
  t: { teardown(fn: () => unknown): void },
  options: { config?: Partial<Config>; handlers?: SystemDependencies['handlers'] } = {},
) {
  const config = loadConfig(
    Object.fromEntries(['GATEWAY', 'MAPPING', 'DEVICE', 'CENTRAL', 'DIAGNOSTICS', 'LOGIN'].map((r) => [`PORTOLAN_${r}_PORT`, '0'])),
    { validateResponses: true, logLevel: 'silent', ...options.config },
  );
  const clock = createFakeClock();
  const system = await startSystem(config, { logger: pino({ level: 'silent' }), clock, ...(options.handlers ? { handlers: options.handlers } : {}) });
  t.teardown(() => system.stop());
  return { system, clock, config };
}
