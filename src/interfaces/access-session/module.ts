import type * as Sdk from '../../../generated/access-session/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule } from '../../server/interface-module.ts';
import { basicScheme } from '../../server/security.ts';
import { renderGatewayError } from '../rate-limit/error-shape.ts';
import { createAccessSessionDependencies } from './compose.ts';
import { createAccessSessionHandlers } from './handlers.ts';
import { ACCESS_SESSION_MIGRATIONS } from './migrations.ts';
import { ACCESS_SESSION_SETTINGS } from './settings.ts';

/** Interface H: the gateway's access sessions, behind the administrative account. */
export const accessSessionModule = defineModule({
  name: 'access-session',
  settings: ACCESS_SESSION_SETTINGS,
  migrations: ACCESS_SESSION_MIGRATIONS,
  errorShape: () => renderGatewayError,
  authenticators: (context) => ({
    adminBasic: basicScheme(context.adminAuthenticator, {
      missing: 'administrative credentials are required',
      wrong: 'invalid administrative credentials',
      challenge: 'Basic realm="portolan-gateway"',
    }),
  }),
  create: (context) =>
    createAccessSessionHandlers(
      createAccessSessionDependencies({ database: context.database, config: context.config, clock: context.clock }),
    ) satisfies OperationHandlers<typeof Sdk>,
});
