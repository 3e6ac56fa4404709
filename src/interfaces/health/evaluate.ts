import type { Health } from '../../../generated/health/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import { fail, ok, type PortolanError, type Result } from '../../lib/errors.ts';
import type { Timers } from '../../lib/timers.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import type { PingResult } from '../../stores/database.ts';

/** What a role depends on: its database, and the other services it calls (may be none). */
export type RoleChecks = {
  database: (timeoutMs: number) => Promise<PingResult>;
  services: readonly ((timeoutMs: number) => Promise<PingResult>)[];
};

/** The health document of a role whose checks answered: `healthy`, or `unhealthy` naming the side that failed. */
export type HealthReport = Health & { status: 'healthy' | 'unhealthy' };

/**
 * Runs a role's checks, each bounded by `timeoutMs`, so an answer always comes well inside the
 * monitor's 16 s. A role that is shutting down reports its services unavailable (unhealthy) so the
 * monitor takes it out of rotation before its connections close. A check that throws is the one
 * expected failure (`internal`, naming what failed).
 */
export async function evaluateHealth(
  checks: RoleChecks,
  options: { clock: Clock; timeoutMs: number; draining: boolean; timers?: Timers },
): Promise<Result<HealthReport, PortolanError & { code: 'internal' }>> {
  const bounded = (check: (ms: number) => Promise<PingResult>) =>
    withTimeout(check(options.timeoutMs), options.timeoutMs, (): PingResult => ({ ok: false, reason: 'timed out' }), options.timers);
  try {
    const [database, ...services] = await Promise.all([bounded(checks.database), ...checks.services.map(bounded)]);
    const databaseUp = database!.ok;
    const servicesUp = !options.draining && services.every((s) => s.ok);
    return ok({
      status: databaseUp && servicesUp ? 'healthy' : 'unhealthy',
      database: databaseUp ? 'connected' : 'disconnected',
      services: servicesUp ? 'available' : 'unavailable',
      timestamp: options.clock.now().toISOString(),
    });
  } catch (error) {
    // A check that throws instead of answering is a bug in the check: report it, never crash.
    return fail({ code: 'internal' as const, message: `Health check failed: ${(error as Error).message}` });
  }
}
