import type { InterfaceName } from './spec-catalog.ts';

/** The roles of the reference system, in the order every listing uses: one listener each (at `defaultPort` + PORTOLAN_PORT_OFFSET), all in one process by default. */
export const ROLE_DEFINITIONS = {
  gateway: { defaultPort: 8080, fallbackInterface: 'rate-limit', seed: '{base_url}' },
  mapping: { defaultPort: 8081, fallbackInterface: 'mapping', seed: 'pool member behind the gateway' },
  device: { defaultPort: 8100, fallbackInterface: 'device-config', seed: 'local management interface' },
  central: { defaultPort: 8200, fallbackInterface: 'topology', seed: '{mgmt_url}' },
  diagnostics: { defaultPort: 8300, fallbackInterface: 'snapshots', seed: '{diag_api_url}' },
  login: { defaultPort: 8301, fallbackInterface: 'snapshots', seed: '{auth_url}' },
} as const satisfies Record<string, { defaultPort: number; fallbackInterface: InterfaceName; seed: string }>;

export type RoleName = keyof typeof ROLE_DEFINITIONS;
export const ROLE_NAMES = Object.keys(ROLE_DEFINITIONS) as RoleName[];
