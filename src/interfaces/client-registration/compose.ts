import type { AccountStore } from '../../accounts/account-store.ts';
import type { AdminCredentials } from '../../accounts/admin-bootstrap.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Timers } from '../../lib/timers.ts';
import { ConfigError, type CoreConfig } from '../../lib/config.ts';
import type { RegistrationConfig } from './settings.ts';

type Config = RegistrationConfig & Pick<CoreConfig, 'ports'>;
import type { Logger } from '../../lib/logger.ts';
import { createDeviceManagementClient } from './device-management.ts';
import type { ClientRegistrationDependencies } from './handlers.ts';

export type ClientRegistrationWiring = {
  config: Config;
  accounts: AccountStore;
  admin: AdminCredentials;
  /** The URL of this process's device role once it listens (undefined when it does not run here). */
  deviceRoleUrl: () => string | undefined;
  clock: Clock;
  /** Times the management session's keep-alive. */
  timers: Timers;
  /** Aborted when the process stops: ends the management login under way and the keep-alive. */
  stopping: AbortSignal;
  logger: Logger;
};

/** The flow's dependencies, and the management login to make when the gateway starts. */
export type ClientRegistrationComposition = ClientRegistrationDependencies & {
  /**
   * Logs in to the management interface now (static mode: nothing to do), so that the session holds a token
   * before anyone else's failed admin logins from the gateway's address can make the device's backoff refuse
   * the login. A failure is logged; the first registration tries again. Ended by `stopping`.
   */
  warmManagement(): Promise<void>;
};

/**
 * Builds the registration flow's dependencies from the settings. The management URL is resolved at
 * each call: `managementUrl` when set, else this process's device role (which starts after the
 * gateway), else the device port on localhost. Refuses static mode without the static pair.
 */
export function createClientRegistrationDependencies(wiring: ClientRegistrationWiring): ClientRegistrationComposition {
  const { config } = wiring;
  if (config.registrationStaticCredentials && (config.registrationStaticClientId === '' || config.registrationStaticClientSecret === '')) {
    throw new ConfigError([
      'PORTOLAN_REGISTRATION_STATIC_CREDENTIALS is on, so PORTOLAN_REGISTRATION_STATIC_CLIENT_ID and PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET must both be set',
    ]);
  }
  const logger = wiring.logger.child({ interface: 'client-registration' });
  const management = createDeviceManagementClient({
    baseUrl: () => config.managementUrl || wiring.deviceRoleUrl() || `http://localhost:${config.ports.device}`,
    credentials: wiring.admin,
    clock: wiring.clock,
    keepAlive: { timers: wiring.timers, stop: wiring.stopping },
  });
  return {
    settings: {
      accessProfile: config.registrationAccessProfile,
      partition: config.registrationPartition,
      oauthProfile: config.registrationOauthProfile,
      scopes: config.registrationScopes,
      accessPolicy: config.registrationAccessPolicy,
      staticCredentials: config.registrationStaticCredentials,
      staticClientId: config.registrationStaticClientId,
      staticClientSecret: config.registrationStaticClientSecret,
    },
    verify: (profile, username, password) => wiring.accounts.verify(profile, username, password),
    management,
    clock: wiring.clock,
    logger,
    async warmManagement() {
      if (config.registrationStaticCredentials) return;
      const warmed = await management.warm(wiring.stopping);
      if (!warmed.ok && !wiring.stopping.aborted)
        logger.info({ message: warmed.error }, 'the management login at start failed; the first registration tries again');
    },
  };
}
