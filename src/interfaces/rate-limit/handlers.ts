import type * as Sdk from '../../../generated/rate-limit/sdk.gen.ts';
import type * as E from '../../../generated/rate-limit/types.gen.ts';
import { readBearerToken } from '../../gateway/rate-limit/token.ts';
import type { Logger } from '../../lib/logger.ts';
import { type OperationHandlers, refuse, type TypedHandler } from '../../server/handler-types.ts';

/** RFC 6750 3.1: the challenge of an `invalid_request` answer. */
const BEARER_CHALLENGE: Readonly<Record<string, string>> = { 'www-authenticate': 'Bearer error="invalid_request"' };

export type RateLimitDependencies = {
  /** The status of the caller's token; never counts (seed E). */
  status(
    authorization: string | string[] | undefined,
  ): Promise<{ kind: 'status'; status: E.RateLimitStatus } | { kind: 'unavailable'; reason: string }>;
  logger: Logger;
};

/** Interface E's one operation; the counting itself happens in the gateway, before any routing. */
export function createRateLimitHandlers(deps: RateLimitDependencies) {
  const getRateLimitStatus: TypedHandler<E.GetRateLimitStatusData, E.GetRateLimitStatusResponses, E.GetRateLimitStatusErrors> = async ({
    headers,
    requestId,
  }) => {
    // The same reading as the counting stage: a header it would refuse is refused here too (it counts nothing either way).
    const reading = readBearerToken(headers.authorization);
    if (reading.kind === 'malformed') return refuse('invalidRequest', reading.reason, BEARER_CHALLENGE);
    const result = await deps.status(headers.authorization);
    if (result.kind === 'status') return { status: 200, body: result.status, headers: { 'cache-control': 'no-store' } };
    // The reason names the store (operators read it in the log); the answer keeps the spec's fixed sentence.
    deps.logger.warn({ requestId, reason: result.reason }, 'rate-limit status unavailable');
    return refuse('counterStoreUnavailable');
  };
  // On the literal: a misspelt or unknown operationId is a type error here.
  return { getRateLimitStatus } satisfies OperationHandlers<typeof Sdk>;
}
