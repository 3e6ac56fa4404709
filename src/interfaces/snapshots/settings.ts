import type { Setting, SettingsValues } from '../../lib/config.ts';

/** PORTOLAN_SNAPSHOT_MAX_ATTEMPTS's default, and the snapshot service's when it is not given one. */
export const DEFAULT_SNAPSHOT_MAX_ATTEMPTS = 3;

/** The snapshot diagnostics API's settings (C), declared beside it; the composition root adds them to the configuration. */
export const SNAPSHOT_SETTINGS = [
  {
    key: 'snapshotDataDir',
    env: 'PORTOLAN_SNAPSHOT_DATA_DIR',
    schema: { type: 'string', minLength: 1, maxLength: 4096 },
    default: './data/snapshots',
    description: 'Where uploaded snapshots and their unpacked folders are kept (C).',
  },
  {
    key: 'snapshotMaxBytes',
    env: 'PORTOLAN_SNAPSHOT_MAX_BYTES',
    schema: { type: 'integer', minimum: 1, maximum: 17_179_869_184 },
    default: 1_073_741_824,
    description: 'Largest snapshot upload in bytes; a larger one is 413 and nothing of it is kept (C).',
  },
  {
    key: 'snapshotConcurrency',
    env: 'PORTOLAN_SNAPSHOT_CONCURRENCY',
    schema: { type: 'integer', minimum: 0, maximum: 64 },
    default: 2,
    description:
      'Snapshots processed at once by this process; the others wait in the queue. 0: this process only takes uploads, and processes on the same store and data directory process them (C).',
  },
  {
    key: 'snapshotLeaseMs',
    env: 'PORTOLAN_SNAPSHOT_LEASE_MS',
    schema: { type: 'integer', minimum: 200, maximum: 3_600_000 },
    default: 60_000,
    description:
      'How long a processing job or an upload in progress is held without renewal; after a crash on another machine the job is taken up again, and the partial upload removed, this long after (C).',
  },
  {
    key: 'snapshotAccountQuotaBytes',
    env: 'PORTOLAN_SNAPSHOT_ACCOUNT_QUOTA_BYTES',
    schema: { type: 'integer', minimum: 1, maximum: 1_125_899_906_842_624 },
    default: 2_147_483_648,
    description:
      "Disk one account's snapshots may use, in bytes: archives waiting, unpacked files once processed, uploads in progress. An upload that does not fit is 507 and nothing of it is kept; a processed snapshot that does not fit ends ERROR (C).",
  },
  {
    key: 'snapshotAccountMaxSnapshots',
    env: 'PORTOLAN_SNAPSHOT_ACCOUNT_MAX_SNAPSHOTS',
    schema: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    default: 1000,
    description: 'Snapshots one account may hold, uploads in progress included; one more upload is 507 (C).',
  },
  {
    key: 'snapshotJobRetentionSeconds',
    env: 'PORTOLAN_SNAPSHOT_JOB_RETENTION_S',
    schema: { type: 'integer', minimum: 60, maximum: 31_536_000 },
    default: 604_800,
    description: 'Finished snapshot processing jobs are purged from the store this many seconds after they ended (C).',
  },
  {
    key: 'snapshotMaxInflatedBytes',
    env: 'PORTOLAN_SNAPSHOT_MAX_INFLATED_BYTES',
    schema: { type: 'integer', minimum: 1_048_576, maximum: 68_719_476_736 },
    default: 2_147_483_648,
    description:
      'Bytes a snapshot may decompress to (its tar stream: files, headers, padding); decompression stops at the tar end marker, and past this the snapshot ends ERROR (C).',
  },
  {
    key: 'snapshotTimeBudgetMs',
    env: 'PORTOLAN_SNAPSHOT_TIME_BUDGET_MS',
    schema: { type: 'integer', minimum: 100, maximum: 3_600_000 },
    default: 60_000,
    description:
      'How long unpacking and evaluating one snapshot may take (on a worker thread, off the event loop); past it the work is stopped and the snapshot ends ERROR (C).',
  },
  {
    key: 'snapshotMaxAttempts',
    env: 'PORTOLAN_SNAPSHOT_MAX_ATTEMPTS',
    schema: { type: 'integer', minimum: 1, maximum: 20 },
    default: DEFAULT_SNAPSHOT_MAX_ATTEMPTS,
    description:
      'A processing job whose worker thread crashed, or whose process died or hung past its lease, this many times is given up: the snapshot ends ERROR. A graceful stop (a restart) is no attempt: the job is taken up again after it (C).',
  },
  {
    key: 'diagnosticsAccessProfile',
    env: 'PORTOLAN_DIAGNOSTICS_ACCESS_PROFILE',
    schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' },
    default: 'diagnostics',
    description:
      'Access profile whose users may log in to the diagnostics API (C; the administrative account may too). Manage them with `portolan users --profile diagnostics`.',
  },
  {
    key: 'diagnosticsSessionLifetimeSeconds',
    env: 'PORTOLAN_DIAGNOSTICS_SESSION_LIFETIME_S',
    schema: { type: 'integer', minimum: 60, maximum: 604_800 },
    default: 28_800,
    description: 'Longest life of a diagnostics session from its login, in seconds (C).',
  },
  {
    key: 'diagnosticsSessionIdleSeconds',
    env: 'PORTOLAN_DIAGNOSTICS_SESSION_IDLE_S',
    schema: { type: 'integer', minimum: 30, maximum: 604_800 },
    default: 1800,
    description: 'A diagnostics session ends after this many seconds without a request (C).',
  },
  {
    key: 'diagnosticsCookieDomain',
    env: 'PORTOLAN_DIAGNOSTICS_COOKIE_DOMAIN',
    schema: { type: 'string', maxLength: 253, pattern: '^([A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*)?$' },
    default: '',
    description: 'Domain of the session cookies, so a login host and an API host on different names share them (C; empty: host-only).',
  },
  {
    key: 'diagnosticsPublicUrl',
    env: 'PORTOLAN_DIAGNOSTICS_PUBLIC_URL',
    schema: {
      type: 'string',
      maxLength: 2048,
      pattern: "^(https?://([A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?)?$",
    },
    patternHint: 'must be an http(s) URL without user, query or fragment, e.g. https://diag.example.com',
    default: '',
    description:
      "URL the diagnostics API is reached by through a proxy in front: the login redirects there, and pages at its origin may post the login form (C; empty: the login host name if it is one of the roles' own, else the listening address).",
  },
  {
    key: 'diagnosticsSecureCookies',
    env: 'PORTOLAN_DIAGNOSTICS_SECURE_COOKIES',
    schema: { type: 'boolean' },
    default: false,
    description: 'Mark the session cookies Secure: set when TLS is terminated in front of the roles (C).',
  },
] as const satisfies readonly Setting[];

export type SnapshotConfig = SettingsValues<typeof SNAPSHOT_SETTINGS>;
