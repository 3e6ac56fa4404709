import type { Setting, SettingsValues } from '../../lib/config.ts';

/** The device's settings (F), declared beside it; the composition root adds them to the configuration. */
export const DEVICE_SETTINGS = [
  {
    key: 'deviceHostname',
    env: 'PORTOLAN_DEVICE_HOSTNAME',
    schema: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9.-]*$' },
    default: '',
    description: "The device's host name (device-info, deployment results); empty: this machine's host name.",
  },
  {
    key: 'deviceTokenTimeoutSeconds',
    env: 'PORTOLAN_DEVICE_TOKEN_TIMEOUT_S',
    schema: { type: 'integer', minimum: 1, maximum: 36_000 },
    default: 1200,
    description: 'Lifetime of a token from the device login, in seconds (F).',
  },
  {
    key: 'devicePortOffset',
    env: 'PORTOLAN_DEVICE_PORT_OFFSET',
    schema: { type: 'integer', minimum: 0, maximum: 65_535 },
    default: 10_000,
    description: 'Deployed services listen on virtualPort plus this offset, so no root is needed (F; virtual port 80 -> 10080).',
  },
  {
    key: 'deviceDataDir',
    env: 'PORTOLAN_DEVICE_DATA_DIR',
    schema: { type: 'string', minLength: 1, maxLength: 4096 },
    default: './data/device',
    description: "The device's data directory: qlog traces (trace<N>.qlog) are written here (F).",
  },
  {
    key: 'deviceLeaseMs',
    env: 'PORTOLAN_DEVICE_LEASE_MS',
    schema: { type: 'integer', minimum: 400, maximum: 600_000 },
    default: 4000,
    description:
      'Device pair (F): the active device process renews its lease every quarter of this; the standby takes over once it lapses (ms).',
  },
  {
    key: 'deviceAdvertiseUrl',
    env: 'PORTOLAN_DEVICE_ADVERTISE_URL',
    schema: { type: 'string', maxLength: 2048, pattern: '^(https?://[^\\s/?#@]+)?$' },
    default: '',
    description:
      "Device pair (F): the management URL the other device process reaches this one on (writes passed on to the active one); empty: this process's own device listener.",
  },
  {
    key: 'deviceRuleMaxSteps',
    env: 'PORTOLAN_DEVICE_RULE_MAX_STEPS',
    schema: { type: 'integer', minimum: 100, maximum: 10_000_000 },
    default: 10_000,
    description:
      "Deployed services' rules (F): the most interpreter steps one run may take; past it the request is answered 500 and logged.",
  },
  {
    key: 'deviceRuleMaxMs',
    env: 'PORTOLAN_DEVICE_RULE_MAX_MS',
    schema: { type: 'integer', minimum: 1, maximum: 10_000 },
    default: 50,
    description: "Deployed services' rules (F): the longest one run may take (ms); past it the request is answered 500 and logged.",
  },
] as const satisfies readonly Setting[];

export type DeviceConfig = SettingsValues<typeof DEVICE_SETTINGS>;
