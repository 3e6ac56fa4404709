import type * as Sdk from '../../../generated/topology/sdk.gen.ts';
import { createTokenService } from '../../accounts/auth-tokens.ts';
import type { CoreConfig } from '../../lib/config.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import type { InterfaceModule, ModuleContext } from '../../server/interface-module.ts';
import { headerTokenScheme } from '../../server/security.ts';
import { createTopologyAuthHandlers } from './auth-handlers.ts';
import { renderTopologyError } from './error-shape.ts';
import { TOPOLOGY_SETTINGS, type TopologyConfig } from './settings.ts';

type Config = CoreConfig & TopologyConfig;

/** The management system's tokens: its own issuer, so a device token is unknown here and the other way round. */
const tokensOf = (context: ModuleContext<Config>) =>
  createTokenService(context.database, { clock: context.clock, issuer: 'central', accessTimeoutSeconds: context.config.centralTokenTimeoutSeconds });

/**
 * Interface B, the topology configuration API of the management system: the token login and its
 * exchange work (the administrative accounts); the topology operations answer 501 until their issue
 * lands, behind the token scheme, checked before the request is parsed.
 */
export const topologyModule = {
  name: 'topology',
  settings: TOPOLOGY_SETTINGS,
  errorShape: () => renderTopologyError,
  authenticators: (context: ModuleContext<Config>) => {
    const tokens = tokensOf(context);
    return {
      vendorAuthToken: headerTokenScheme('X-Vendor-Auth-Token', (token) => tokens.verify(token), {
        missing: 'X-Vendor-Auth-Token is required; log in first.',
        invalid: 'The token is unknown or expired; log in again.',
      }),
    };
  },
  create: (context: ModuleContext<Config>) =>
    createTopologyAuthHandlers({ tokens: tokensOf(context), checkPassword: context.adminAuthenticator }) satisfies OperationHandlers<typeof Sdk>,
} satisfies InterfaceModule;
