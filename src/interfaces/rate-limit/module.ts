import type * as Sdk from '../../../generated/rate-limit/types.gen.ts';
import type * as Operations from '../../../generated/rate-limit/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule } from '../../server/interface-module.ts';
import { renderGatewayError } from './error-shape.ts';
import { createRateLimitHandlers } from './handlers.ts';

/**
 * Interface E's status operation (the counting itself is the gateway's first stage, src/gateway/gateway-stages.ts).
 * The bearer scheme is only a counter key (seed E): never checked, so it always passes.
 */
export const rateLimitModule = defineModule({
  name: 'rate-limit',
  errorShape: () => renderGatewayError,
  authenticators: () => ({ bearerToken: () => ({ ok: true }) }),
  healthChecks: (context) => ({ gateway: [(ms) => context.traffic().pingLimiter(ms)] }),
  create: (context) =>
    createRateLimitHandlers({
      status: (authorization) =>
        context.traffic().rateLimitStatus(authorization) as Promise<
          Awaited<ReturnType<Parameters<typeof createRateLimitHandlers>[0]['status']>>
        >,
      logger: context.logger,
    }) satisfies OperationHandlers<typeof Operations>,
});

export type RateLimitStatus = Sdk.RateLimitStatus;
