import type { AccessVerdict } from '../../accounts/account-store.ts';
import type { Clock } from '../../lib/clock.ts';
import { fail, ok, type PortolanError, type Result } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { agentOf, clientAppName } from './client-app-name.ts';
import type { DeviceManagement } from './device-management.ts';
import type { RegistrationForm } from './registration-form.ts';

/** The registration settings of seed D (see `registration*` in src/lib/config.ts). */
export type RegistrationSettings = {
  accessProfile: string;
  partition: string;
  oauthProfile: string;
  scopes: string;
  accessPolicy: string;
  staticCredentials: boolean;
  staticClientId: string;
  staticClientSecret: string;
};

export type RegistrationFlowDependencies = {
  settings: RegistrationSettings;
  /** Evaluates an access profile with a username and password (the account store's verify). */
  verify: (profile: string, username: string, password: string) => Promise<AccessVerdict>;
  management: DeviceManagement;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
};

/** The registry codes of the flow's failures (seed Errors D; their `error` words are the error shape's). */
export type RegistrationFailureCode =
  | 'credentialsRejected'
  | 'clientAppCreationFailed'
  | 'clientAppBindingFailed'
  | 'accessPolicySyncFailed';

export type RegistrationOutcome = Result<{ clientId: string; clientSecret: string }, PortolanError & { code: RegistrationFailureCode }>;

/** The management step that failed, by the code it refuses with. */
const STEP_FAILURES = {
  creation: 'clientAppCreationFailed',
  binding: 'clientAppBindingFailed',
  synchronization: 'accessPolicySyncFailed',
} as const satisfies Record<string, RegistrationFailureCode>;

/**
 * The registration flow of seed Endpoints D, step by step: check the credentials with the access
 * profile; answer the static pair when switched on; otherwise create the client application, bind it
 * to the OAuth profile and re-apply the access policy on the device. A failure after the application
 * was created deletes it again, so no half-registered application is left behind.
 */
export function createRegistrationFlow(deps: RegistrationFlowDependencies) {
  const { settings, management, logger } = deps;

  return async function register(form: RegistrationForm, userAgent: string | readonly string[] | undefined): Promise<RegistrationOutcome> {
    const verdict = await deps.verify(settings.accessProfile, form.username, form.password);
    if (verdict !== 'allow') {
      logger.info({ accessProfile: settings.accessProfile, verdict }, 'registration refused: credentials rejected');
      return fail({ code: 'credentialsRejected', message: 'access denied by the access policy' });
    }
    if (settings.staticCredentials) return ok({ clientId: settings.staticClientId, clientSecret: settings.staticClientSecret });

    const name = clientAppName(form.username, agentOf(userAgent), Math.floor(deps.clock.nowMs() / 1000));
    const created = await management.createClientApp({
      name,
      appName: name,
      authType: 'secret',
      grantPassword: 'enabled',
      scopes: settings.scopes,
    });
    if (!created.ok) return failed('creation', name, created.error);

    const undo = async () => {
      const deleted = await management.deleteClientApp(created.value.partition, created.value.name);
      // Nothing more can be done here; the operator finds the leftover by its name in the log.
      if (!deleted.ok)
        logger.error({ clientApp: name, message: deleted.error }, 'registration could not delete the client application it created');
    };
    const bound = await management.bindClientApp(settings.partition, settings.oauthProfile, name);
    if (!bound.ok) {
      await undo();
      return failed('binding', name, bound.error);
    }
    const applied = await management.applyAccessPolicy(settings.partition, settings.accessPolicy);
    if (!applied.ok) {
      await undo();
      return failed('synchronization', name, applied.error);
    }
    logger.info({ clientApp: name }, 'client application registered');
    return ok({ clientId: created.value.clientId, clientSecret: created.value.clientSecret });
  };

  /** A management step failed: the answer carries the device's message (ManagementResult's error). */
  function failed(step: keyof typeof STEP_FAILURES, clientApp: string, message: string): RegistrationOutcome {
    logger.warn({ step, clientApp, message }, 'registration failed at a management call');
    return fail({ code: STEP_FAILURES[step], message });
  }
}
