import type * as Sdk from '../../../generated/client-registration/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule } from '../../server/interface-module.ts';
import { createClientRegistrationDependencies } from './compose.ts';
import { REGISTRATION_SETTINGS } from './settings.ts';
import { renderRegistrationError } from './error-shape.ts';
import { createClientRegistrationHandlers } from './handlers.ts';

/** Interface D, answered by the gateway's registration stage (src/gateway/gateway-stages.ts). */
export const clientRegistrationModule = defineModule({
  name: 'client-registration',
  settings: REGISTRATION_SETTINGS,
  errorShape: () => renderRegistrationError,
  create: (context) => {
    // Aborted at stop: cuts the management login short and ends the session's keep-alive.
    const stopping = new AbortController();
    const dependencies = createClientRegistrationDependencies({
      config: context.config,
      accounts: context.accounts,
      admin: context.admin,
      clock: context.clock,
      timers: context.timers,
      stopping: stopping.signal,
      logger: context.logger,
      // The device role listens after the gateway, so its URL is looked up at each registration.
      deviceRoleUrl: () => context.roleUrl('device'),
    });
    // Logged in once every role listens (the device of this process included), in the background: a device
    // that does not answer must not hold up the start; a stop cuts the login short and waits for its end.
    let warming: Promise<void> | undefined;
    context.onRole('gateway', {
      start: async () =>
        void (warming = dependencies
          .warmManagement()
          .catch((error: unknown) => context.logger.error({ err: error }, 'registration: the management login at start failed'))),
      stop: async () => {
        stopping.abort();
        await warming;
      },
    });
    return createClientRegistrationHandlers(dependencies) satisfies OperationHandlers<typeof Sdk>;
  },
});
