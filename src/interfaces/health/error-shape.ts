import type { Clock } from '../../lib/clock.ts';
import { statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/** G: the health body's shape, with the time of the answer. */
export const healthErrorShape =
  (clock: Clock): ErrorRenderer =>
  (e) => ({
    status: statusOf(e),
    body: { status: 'error', message: e.message, timestamp: clock.now().toISOString() },
  });
