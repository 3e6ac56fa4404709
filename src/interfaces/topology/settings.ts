import type { Setting, SettingsValues } from '../../lib/config.ts';

/** The management system's settings (B), declared beside it; the composition root adds them to the configuration. */
export const TOPOLOGY_SETTINGS = [
  { key: 'centralTokenTimeoutSeconds', env: 'PORTOLAN_CENTRAL_TOKEN_TIMEOUT_S', schema: { type: 'integer', minimum: 1, maximum: 36_000 }, default: 1200, description: 'Lifetime of a token from the management system login, in seconds (B).' },
] as const satisfies readonly Setting[];

export type TopologyConfig = SettingsValues<typeof TOPOLOGY_SETTINGS>;
