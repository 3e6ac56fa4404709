import type * as Sdk from '../../../generated/health/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule } from '../../server/interface-module.ts';
import { healthErrorShape } from './error-shape.ts';
import { createHealthHandlers } from './handlers.ts';

/** Interface G on every role: `/health` from that role's checks, and the gateway's pool. */
export const healthModule = defineModule({
  name: 'health',
  errorShape: healthErrorShape,
  create: (context) =>
    createHealthHandlers({
      checksFor: (role) => context.healthChecks(role),
      poolStatus: () => context.traffic().poolStatus() as never,
      clock: context.clock,
      timeoutMs: context.config.healthCheckTimeoutMs,
      isDraining: context.isDraining,
    }) satisfies OperationHandlers<typeof Sdk>,
});
