import type { OperationHandlers } from '../../server/handler-types.ts';
import type * as Sdk from '../../../generated/rate-limit/sdk.gen.ts';
import type * as E from '../../../generated/rate-limit/types.gen.ts';
import type { Logger } from '../../lib/logger.ts';
import type { TypedHandler } from '../../server/handler-types.ts';

export type RateLimitDependencies = {
  /** The status of the caller's token; never counts (seed E). */
  status(authorization: string | string[] | undefined): Promise<{ kind: 'status'; status: E.RateLimitStatus } | { kind: 'unavailable'; reason: string }>;
  logger: Logger;
};

/** Interface E's one operation; the counting itself happens in the gateway, before any routing. */
export function createRateLimitHandlers(deps: RateLimitDependencies) {
  const getRateLimitStatus: TypedHandler<E.GetRateLimitStatusData, E.GetRateLimitStatusResponses & E.GetRateLimitStatusErrors> = async ({ headers, requestId }) => {
    const result = await deps.status(headers.authorization);
    if (result.kind === 'status') return { status: 200, body: result.status, headers: { 'cache-control': 'no-store' } };
    deps.logger.warn({ requestId, reason: result.reason }, 'rate-limit status unavailable');
    return { status: 500, body: { error: 'Internal Server Error', 'error-message': 'rate-limit counter store unavailable' } };
  };
  // On the literal: a misspelt or unknown operationId is a type error here.
  return { getRateLimitStatus } satisfies OperationHandlers<typeof Sdk>;
}
