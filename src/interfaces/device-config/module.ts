import type * as Sdk from '../../../generated/device-config/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import type { InterfaceModule } from '../../server/interface-module.ts';
import { basicScheme } from '../../server/security.ts';
import { renderDeviceError } from './error-shape.ts';
import { createDeviceConfigHandlers } from './handlers.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './migrations.ts';
import { createSqlDeviceOauthStore } from './oauth-store.ts';

/** Interface F, the device's management interface (seed Authentication F: basic, the administrative account). */
export const deviceConfigModule = {
  name: 'device-config',
  migrations: DEVICE_CONFIG_MIGRATIONS,
  errorShape: () => renderDeviceError,
  authenticators: (context) => ({
    // The real product's challenge and messages; the answer never repeats what was sent.
    basicAuth: basicScheme(context.adminAuthenticator, {
      missing: 'Authorization failed: no user authentication header or token detected.',
      wrong: 'Authentication failed.',
      challenge: 'Basic realm="Enterprise Manager"',
    }),
  }),
  create: (context) =>
    createDeviceConfigHandlers({ store: createSqlDeviceOauthStore(context.database, { clock: context.clock }) }) satisfies OperationHandlers<typeof Sdk>,
} satisfies InterfaceModule;
