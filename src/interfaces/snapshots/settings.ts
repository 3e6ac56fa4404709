import type { Setting, SettingsValues } from '../../lib/config.ts';

/** The snapshot diagnostics API's settings (C), declared beside it; the composition root adds them to the configuration. */
export const SNAPSHOT_SETTINGS = [
  { key: 'snapshotDataDir', env: 'PORTOLAN_SNAPSHOT_DATA_DIR', schema: { type: 'string', minLength: 1, maxLength: 4096 }, default: './data/snapshots', description: 'Where uploaded snapshots and their unpacked folders are kept (C).' },
  { key: 'snapshotMaxBytes', env: 'PORTOLAN_SNAPSHOT_MAX_BYTES', schema: { type: 'integer', minimum: 1, maximum: 17_179_869_184 }, default: 1_073_741_824, description: 'Largest snapshot upload in bytes; a larger one is 413 and nothing of it is kept (C).' },
  { key: 'snapshotConcurrency', env: 'PORTOLAN_SNAPSHOT_CONCURRENCY', schema: { type: 'integer', minimum: 0, maximum: 64 }, default: 2, description: 'Snapshots processed at once by this process; the others wait in the queue. 0: this process only takes uploads, and processes on the same store and data directory process them (C).' },
  { key: 'snapshotLeaseMs', env: 'PORTOLAN_SNAPSHOT_LEASE_MS', schema: { type: 'integer', minimum: 200, maximum: 3_600_000 }, default: 60_000, description: 'How long a processing job is held without renewal; after a crash it is taken up again this long after the restart (C).' },
  { key: 'diagnosticsAccessProfile', env: 'PORTOLAN_DIAGNOSTICS_ACCESS_PROFILE', schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }, default: 'diagnostics', description: 'Access profile whose users may log in to the diagnostics API (C; the administrative account may too). Manage them with `portolan users --profile diagnostics`.' },
  { key: 'diagnosticsSessionLifetimeSeconds', env: 'PORTOLAN_DIAGNOSTICS_SESSION_LIFETIME_S', schema: { type: 'integer', minimum: 60, maximum: 604_800 }, default: 28_800, description: 'Longest life of a diagnostics session from its login, in seconds (C).' },
  { key: 'diagnosticsSessionIdleSeconds', env: 'PORTOLAN_DIAGNOSTICS_SESSION_IDLE_S', schema: { type: 'integer', minimum: 30, maximum: 604_800 }, default: 1800, description: 'A diagnostics session ends after this many seconds without a request (C).' },
  { key: 'diagnosticsCookieDomain', env: 'PORTOLAN_DIAGNOSTICS_COOKIE_DOMAIN', schema: { type: 'string', maxLength: 253, pattern: '^([A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*)?$' }, default: '', description: 'Domain of the session cookies, so a login host and an API host on different names share them (C; empty: host-only).' },
  { key: 'diagnosticsSecureCookies', env: 'PORTOLAN_DIAGNOSTICS_SECURE_COOKIES', schema: { type: 'boolean' }, default: false, description: 'Mark the session cookies Secure: set when TLS is terminated in front of the roles (C).' },
] as const satisfies readonly Setting[];

export type SnapshotConfig = SettingsValues<typeof SNAPSHOT_SETTINGS>;
