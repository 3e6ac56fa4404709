import type { OperationHandlers } from '../../server/handler-types.ts';
import type * as Sdk from '../../../generated/health/sdk.gen.ts';
import type * as G from '../../../generated/health/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { TypedHandler } from '../../server/handler-types.ts';
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

/** Interface G on every role: `GET /health` from that role's own checks. */
export function createHealthHandlers(deps: HealthDependencies) {
  const getHealth: TypedHandler<G.GetHealthData, G.GetHealthResponses & G.GetHealthErrors> = async ({ role }) => {
    const verdict = await evaluateHealth(deps.checksFor(role), {
      clock: deps.clock,
      timeoutMs: deps.timeoutMs,
      draining: deps.isDraining(),
    });
    return { ...verdict, headers: { 'cache-control': 'no-store' } };
  };
  const getPoolStatus: TypedHandler<G.GetPoolStatusData, G.GetPoolStatusResponses> = () => {
    if (!deps.poolStatus) throw new Error('the gateway pool is not running in this process');
    return { status: 200, body: deps.poolStatus(), headers: { 'cache-control': 'no-store' } };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return { getHealth, getPoolStatus } satisfies OperationHandlers<typeof Sdk>;
}
