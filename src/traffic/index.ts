// Traffic machinery shared by the gateway and the device's deployed services: pools and their health
// monitor (interface G), the reverse proxy, the pool's metrics, and the device's data plane.
export { createPool, type Member, type MemberState, type MonitorSettings, type Pool, type PoolOptions, type StateChange } from './pool.ts';
export { createProxy, type ReverseProxy, type ProxyErrorCode, type ProxyOptions } from './proxy.ts';
export type { ProxyAnswer, ProxyRequest } from './member-exchange.ts';
export { registerPoolMetrics } from './pool-metrics.ts';
export { formatAddress, healthSendString, probeHealth, type MemberAddress, type ProbeResult } from './probe.ts';
export {
  createDataPlane,
  type AddressStatus,
  type ApplyFailure,
  type ApplyOutcome,
  type DataPlane,
  type DataPlaneOptions,
  type ServiceStatus,
  type VirtualServiceSpec,
} from './data-plane.ts';
export { createVirtualServer, type VirtualServer, type VirtualServerOptions } from './virtual-server.ts';
export { createQlogTrace, type QlogTrace, type QlogTraceOptions } from './qlog.ts';
export { DATA_PLANE_LEVELS, type DataPlaneLevel, type ServiceEventHooks } from './service-events.ts';
