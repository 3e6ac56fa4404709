import { milliseconds, type PoolMemberAddress, type Setting, type SettingsValues } from '../lib/config.ts';

/** The gateway's traffic settings: rate limiting (E), the pool, its health monitor (G) and the proxy. */
export const TRAFFIC_SETTINGS = [
  {
    key: 'rateLimitEnabled',
    env: 'PORTOLAN_RATE_LIMIT_ENABLED',
    schema: { type: 'boolean' },
    default: true,
    description: 'Whether the gateway rate-limits bearer tokens (E).',
  },
  {
    key: 'rateLimitStore',
    env: 'PORTOLAN_RATE_LIMIT_STORE',
    schema: { type: 'string', pattern: '^(memory|sqlite:.+|rediss?://.+)$' },
    default: 'memory',
    description:
      'Rate-limit counters: memory (one process), sqlite:<file> (processes on one machine), redis://host:port (several machines). Unset with more than one worker: rate-limit.db beside the database file.',
  },
  {
    key: 'rateLimitLimit',
    env: 'PORTOLAN_RATE_LIMIT_LIMIT',
    schema: { type: 'integer', minimum: 1, maximum: 1e9 },
    default: 1000,
    description: 'Requests allowed per token and window (E).',
  },
  {
    key: 'rateLimitWindowSeconds',
    env: 'PORTOLAN_RATE_LIMIT_WINDOW_SECONDS',
    schema: { type: 'integer', minimum: 1, maximum: 86_400 * 366 },
    default: 300,
    description: 'Window length in seconds, from the first request, never extended (E).',
  },
  {
    key: 'rateLimitOutagePolicy',
    env: 'PORTOLAN_RATE_LIMIT_OUTAGE_POLICY',
    schema: { enum: ['fail-open', 'fail-closed', 'memory'] },
    default: 'memory',
    description: 'While Redis does not answer: fail-open (pass uncounted), fail-closed (503), memory (count in this process).',
  },
  {
    key: 'rateLimitStoreTimeoutMs',
    env: 'PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 1, maximum: 60_000 },
    default: 50,
    description:
      'A Redis or SQLite counter store that answers nothing for this long is down and the outage policy decides (keeps decisions under 100 ms).',
  },
  {
    key: 'rateLimitRedisKeyPrefix',
    env: 'PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX',
    schema: { type: 'string', maxLength: 200 },
    default: 'portolan:rl:',
    description: 'Prefix of the counter keys in Redis.',
  },
  {
    key: 'poolMembers',
    env: 'PORTOLAN_POOL_MEMBERS',
    schema: { type: 'string', pattern: '^(|[^,:\\s]+:\\d{1,5}(,[^,:\\s]+:\\d{1,5})*)$' },
    default: '',
    description: 'Gateway pool members as host:port,host:port (empty: the mapping role of this process).',
    decode: (value) =>
      String(value)
        .split(',')
        .filter(Boolean)
        .map((member) => ({ host: member.slice(0, member.lastIndexOf(':')), port: Number(member.slice(member.lastIndexOf(':') + 1)) })),
    encode: (value) => (Array.isArray(value) ? (value as PoolMemberAddress[]).map((m) => `${m.host}:${m.port}`).join(',') : value),
  },
  {
    key: 'poolName',
    env: 'PORTOLAN_POOL_NAME',
    schema: { type: 'string', minLength: 1, maxLength: 100 },
    default: 'mapping',
    description: 'Name of the gateway pool.',
  },
  {
    key: 'monitorIntervalMs',
    env: 'PORTOLAN_MONITOR_INTERVAL_MS',
    schema: { type: 'integer', minimum: 10, maximum: 3_600_000 },
    default: 5000,
    description: 'Health monitor interval per pool member, in ms (G: 5 s).',
  },
  {
    key: 'monitorTimeoutMs',
    env: 'PORTOLAN_MONITOR_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 10, maximum: 3_600_000 },
    default: 16_000,
    description: 'Health monitor timeout, in ms (G: 16 s).',
  },
  {
    key: 'monitorTimeUntilUpMs',
    env: 'PORTOLAN_MONITOR_TIME_UNTIL_UP_MS',
    schema: milliseconds(3_600_000),
    default: 0,
    description: 'How long a member must answer 200 before it is marked up, in ms (G: 0).',
  },
  {
    key: 'upstreamTimeoutMs',
    env: 'PORTOLAN_UPSTREAM_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 1, maximum: 3_600_000 },
    default: 30_000,
    description: 'Time a pool member has to send its response headers before the gateway answers 504, in ms.',
  },
  {
    key: 'upstreamConnections',
    env: 'PORTOLAN_UPSTREAM_CONNECTIONS',
    schema: { type: 'integer', minimum: 1, maximum: 10_000 },
    default: 128,
    description: 'Keep-alive connections per pool member.',
  },
] as const satisfies readonly Setting[];

export type TrafficConfig = SettingsValues<typeof TRAFFIC_SETTINGS>;
