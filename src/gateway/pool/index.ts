// The gateway's pool: members, their health monitor (interface G), the reverse proxy and the pool's metrics.
export { createPool, type Member, type MemberState, type MonitorSettings, type Pool, type PoolOptions, type StateChange } from './pool.ts';
export { createProxy, type Proxy, type ProxyErrorCode, type ProxyOptions } from './proxy.ts';
export type { ProxyAnswer, ProxyRequest } from './member-exchange.ts';
export { registerPoolMetrics } from './pool-metrics.ts';
export { formatAddress, healthSendString, probeHealth, type MemberAddress, type ProbeResult } from './probe.ts';
