import type { Health } from '../../../generated/health/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Timers } from '../../lib/timers.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import type { PingResult } from '../../stores/database.ts';

/** What a role depends on: its database, and the other services it calls (may be none). */
export type RoleChecks = {
  database: (timeoutMs: number) => Promise<PingResult>;
  services: readonly ((timeoutMs: number) => Promise<PingResult>)[];
};

export type HealthVerdict = { status: 200 | 503 | 500; body: Health };

/**
 * Runs a role's checks, each bounded by `timeoutMs`, so an answer always comes well inside the
 * monitor's 16 s. A role that is shutting down reports its services unavailable (503) so the monitor
 * takes it out of rotation before its connections close.
 */
export async function evaluateHealth(
  checks: RoleChecks,
  options: { clock: Clock; timeoutMs: number; draining: boolean; timers?: Timers },
): Promise<HealthVerdict> {
  const bounded = (check: (ms: number) => Promise<PingResult>) =>
    withTimeout(check(options.timeoutMs), options.timeoutMs, (): PingResult => ({ ok: false, reason: 'timed out' }), options.timers);
  try {
    const [database, ...services] = await Promise.all([bounded(checks.database), ...checks.services.map(bounded)]);
    const databaseUp = database!.ok;
    const servicesUp = !options.draining && services.every((s) => s.ok);
    const body: Health = {
      status: databaseUp && servicesUp ? 'healthy' : 'unhealthy',
      database: databaseUp ? 'connected' : 'disconnected',
      services: servicesUp ? 'available' : 'unavailable',
      timestamp: options.clock.now().toISOString(),
    };
    return { status: body.status === 'healthy' ? 200 : 503, body };
  } catch (error) {
    // A check that throws instead of answering is a bug in the check: report it, never crash.
    return {
      status: 500,
      body: { status: 'error', message: `Health check failed: ${(error as Error).message}`, timestamp: options.clock.now().toISOString() },
    };
  }
}
