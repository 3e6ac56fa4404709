import type { CoreConfig, PoolMemberAddress } from '../lib/config.ts';
import type { TrafficConfig } from './settings.ts';

type Config = CoreConfig & TrafficConfig;
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createPool, createProxy, registerPoolMetrics, type Pool, type ReverseProxy } from '../traffic/index.ts';
import { createRateLimiter, type CounterStore, type RateLimiter } from './rate-limit/index.ts';

export type GatewayParts = {
  limiter: Pick<RateLimiter, 'check' | 'status' | 'ping'>;
  pool: Pool;
  proxy: ReverseProxy;
  close(): Promise<void>;
};

/** With the limiter switched off, nothing is counted and every status call reports a fresh window. */
function disabledLimiter(config: Config): GatewayParts['limiter'] {
  const fresh = {
    'x-rate-limit-limit': config.rateLimitLimit,
    'x-rate-limit-remaining': config.rateLimitLimit,
    'x-rate-limit-reset': config.rateLimitWindowSeconds,
  };
  return {
    check: async () => ({ kind: 'unlimited', reason: 'limiter-off' }),
    status: async () => ({ kind: 'status', status: fresh }),
    ping: async () => ({ ok: true }),
  };
}

/**
 * The gateway's moving parts from the settings: the rate limiter (E), the pool with its health
 * monitor (G) and the proxy. `members` are the configured pool members, or the mapping role of this
 * process when none are configured.
 */
export async function createGatewayParts(
  config: Config,
  deps: { clock: Clock; logger: Logger; metrics: Metrics; members: readonly PoolMemberAddress[]; counterStore?: CounterStore },
): Promise<GatewayParts> {
  const logger = deps.logger.child({ role: 'gateway' });
  const rateLimiter = config.rateLimitEnabled
    ? await createRateLimiter({
        store: deps.counterStore ?? config.rateLimitStore,
        limit: config.rateLimitLimit,
        windowSeconds: config.rateLimitWindowSeconds,
        clock: deps.clock,
        outagePolicy: config.rateLimitOutagePolicy,
        redisKeyPrefix: config.rateLimitRedisKeyPrefix,
        storeTimeoutMs: config.rateLimitStoreTimeoutMs,
        logger,
      })
    : undefined;
  const pool = createPool({
    name: config.poolName,
    members: deps.members,
    monitor: { intervalMs: config.monitorIntervalMs, timeoutMs: config.monitorTimeoutMs, timeUntilUpMs: config.monitorTimeUntilUpMs },
    clock: deps.clock,
    logger,
  });
  registerPoolMetrics(deps.metrics.registry, pool);
  const proxy = createProxy({
    pool,
    upstreamTimeoutMs: config.upstreamTimeoutMs,
    connectionsPerMember: config.upstreamConnections,
    logger,
  });
  pool.start();
  return {
    limiter: rateLimiter ?? disabledLimiter(config),
    pool,
    proxy,
    async close() {
      await pool.stop();
      await proxy.close();
      await rateLimiter?.close();
    },
  };
}
