import type * as Sdk from '../../../generated/health/sdk.gen.ts';
import type * as G from '../../../generated/health/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import { type OperationHandlers, refusal, type TypedHandler } from '../../server/handler-types.ts';
import { evaluateHealth, type RoleChecks } from './evaluate.ts';

export type HealthDependencies = {
  /** The checks of the role a request arrived on. */
  checksFor: (role: string) => RoleChecks;
  clock: Clock;
  timeoutMs: number;
  /** True once shutdown has begun. */
  isDraining: () => boolean;
  /** The gateway's pool as its monitor sees it (served on the gateway role only). */
  poolStatus?: () => G.PoolStatus;
};

/** No cache may keep a health answer: the monitor reads the state of now. */
const NO_STORE = { 'cache-control': 'no-store' } as const;

/**
 * The spec's 503 is the health document itself (`unhealthy`, which side failed), not an error: it is a
 * response of this handler like the 200, not a failure. Only the 500 (a check threw) is one.
 */
type HealthResponses = G.GetHealthResponses & Pick<G.GetHealthErrors, 503>;

/** Interface G on every role: `GET /health` from that role's own checks. */
export function createHealthHandlers(deps: HealthDependencies) {
  const getHealth: TypedHandler<G.GetHealthData, HealthResponses, G.GetHealthErrors> = async ({ role }) => {
    const report = await evaluateHealth(deps.checksFor(role), {
      clock: deps.clock,
      timeoutMs: deps.timeoutMs,
      draining: deps.isDraining(),
    });
    if (!report.ok) return refusal(report.error, NO_STORE);
    return { status: report.value.status === 'healthy' ? 200 : 503, body: report.value, headers: NO_STORE };
  };
  const getPoolStatus: TypedHandler<G.GetPoolStatusData, G.GetPoolStatusResponses> = () => {
    if (!deps.poolStatus) throw new Error('the gateway pool is not running in this process');
    return { status: 200, body: deps.poolStatus(), headers: NO_STORE };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return { getHealth, getPoolStatus } satisfies OperationHandlers<typeof Sdk>;
}
