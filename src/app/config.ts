import { CORE_SETTINGS, decodeSettings, type CoreConfig, type Setting } from '../lib/config.ts';
import { TRAFFIC_SETTINGS, type TrafficConfig } from '../gateway/settings.ts';
import type { RegistrationConfig } from '../interfaces/client-registration/settings.ts';
import type { AccessSessionConfig } from '../interfaces/access-session/settings.ts';
import type { DeviceConfig } from '../interfaces/device-config/settings.ts';
import type { TopologyConfig } from '../interfaces/topology/settings.ts';
import type { SnapshotConfig } from '../interfaces/snapshots/settings.ts';
import { MODULES } from './modules.ts';

/**
 * Every setting of the system, in `--help` and README order: the core ones, the gateway's traffic, then
 * each module's own, declared beside it (`settings` in its module.ts).
 */
export const SETTINGS: readonly Setting[] = [...CORE_SETTINGS, ...TRAFFIC_SETTINGS, ...MODULES.flatMap((m) => m.settings ?? [])];

/** The decoded configuration: frozen, its type derived from the declarations. */
export type Config = CoreConfig & TrafficConfig & RegistrationConfig & AccessSessionConfig & DeviceConfig & TopologyConfig & SnapshotConfig;

/**
 * Decodes the configuration: defaults, then the JSON file named by PORTOLAN_CONFIG, then environment
 * variables, then `overrides` (tests, embedding), every source through the same schemas.
 *
 * @example
 * const config = loadConfig(process.env); // throws ConfigError listing every wrong setting
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  return decodeSettings<Config>(SETTINGS, env, overrides);
}
