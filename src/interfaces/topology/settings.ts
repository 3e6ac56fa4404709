import type { Setting, SettingsValues } from '../../lib/config.ts';

/** The management system's settings (B), declared beside it; the composition root adds them to the configuration. */
export const TOPOLOGY_SETTINGS = [
  {
    key: 'centralTokenTimeoutSeconds',
    env: 'PORTOLAN_CENTRAL_TOKEN_TIMEOUT_S',
    schema: { type: 'integer', minimum: 1, maximum: 36_000 },
    default: 1200,
    description: 'Lifetime of a token from the management system login, in seconds (B).',
  },
  {
    key: 'centralDevices',
    env: 'PORTOLAN_CENTRAL_DEVICES',
    schema: { type: 'string', maxLength: 65_536, pattern: '^([A-Za-z0-9.-]+=[^,\\s]+(,[A-Za-z0-9.-]+=[^,\\s]+)*)?$' },
    default: '',
    description:
      "The devices the management system deploys to (B): comma-separated `hostname=url`, credentials in the URL (`bigip1=https://admin:secret@10.0.0.5:8100`; without them the administrative account). Empty: this installation's device role under the device's host name.",
    secret: true,
  },
  {
    key: 'centralTaskLeaseMs',
    env: 'PORTOLAN_CENTRAL_TASK_LEASE_MS',
    schema: { type: 'integer', minimum: 200, maximum: 600_000 },
    default: 30_000,
    description:
      'How long a running deployment task is held by its process without renewal; after a crash the task resumes this long after the restart (B).',
  },
  {
    key: 'centralJobRetentionSeconds',
    env: 'PORTOLAN_CENTRAL_JOB_RETENTION_S',
    schema: { type: 'integer', minimum: 60, maximum: 31_536_000 },
    default: 604_800,
    description: 'Finished deployment jobs are purged from the store this many seconds after they ended; the task records stay (B).',
  },
  {
    key: 'centralDeviceTimeoutMs',
    env: 'PORTOLAN_CENTRAL_DEVICE_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 100, maximum: 600_000 },
    default: 30_000,
    description: 'Time limit of each call the management system makes to a device (B).',
  },
] as const satisfies readonly Setting[];

export type TopologyConfig = SettingsValues<typeof TOPOLOGY_SETTINGS>;
