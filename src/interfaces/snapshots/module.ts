import { randomUUID } from 'node:crypto';
import { hostname as machineHostname } from 'node:os';
import type * as Sdk from '../../../generated/snapshots/sdk.gen.ts';
import { createBasicAuthenticator } from '../../accounts/basic-auth.ts';
import type { CoreConfig } from '../../lib/config.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import type { InterfaceModule, ModuleContext } from '../../server/interface-module.ts';
import { renderSnapshotsError } from './error-shape.ts';
import { createCredentialCheck, createLoginHandler, sessionScheme } from './login-handlers.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSessionStore } from './session-store.ts';
import { SNAPSHOT_SETTINGS, type SnapshotConfig } from './settings.ts';
import { negotiate, RESOURCE_FORMATS } from './formats/index.ts';
import { createSnapshotHandlers, HOST } from './snapshot-handlers.ts';
import { createSnapshotService } from './snapshot-service.ts';

type Config = CoreConfig & SnapshotConfig;

const LIST_PATH = '/snapshot-analyzer/api/snapshots';

const sessionsOf = (context: ModuleContext<Config>) =>
  createSessionStore(context.database, {
    clock: context.clock,
    lifetimeSeconds: context.config.diagnosticsSessionLifetimeSeconds,
    idleSeconds: context.config.diagnosticsSessionIdleSeconds,
  });

/**
 * The diagnostics role's URL under the host name the login was reached by: the session cookie is set
 * for that name (no Domain), so a redirect to the listening address (127.0.0.1) after a login at
 * `localhost` would arrive without it. The port stays the diagnostics role's.
 *
 * @example
 * diagnosticsUrlFor('localhost:8301', 'http://127.0.0.1:8300') // 'http://localhost:8300'
 */
export function diagnosticsUrlFor(loginHost: string | undefined, listening: string): string {
  const name = loginHost === undefined ? undefined : HOST.exec(loginHost)?.[1];
  if (name === undefined) return listening;
  const url = new URL(listening);
  return `${url.protocol}//${name}${url.port ? `:${url.port}` : ''}`;
}

/**
 * Interface C, the snapshot diagnostics API (diagnostics role) and its login server (login role): a
 * form login that sets the session cookies, sessions in the store, snapshots per account streamed to
 * disk and processed by a bounded queue on the job port, every format the spec names.
 */
export const snapshotsModule = {
  name: 'snapshots',
  settings: SNAPSHOT_SETTINGS,
  migrations: SNAPSHOT_MIGRATIONS,
  errorShape: () => renderSnapshotsError,
  authenticators: (context: ModuleContext<Config>) => ({ ssoSession: sessionScheme(sessionsOf(context)) }),
  create: (context: ModuleContext<Config>) => {
    const { config, clock } = context;
    const diagnosticsUrl = () => context.roleUrl('diagnostics') ?? `http://${config.host}:${config.ports.diagnostics}`;
    const service = createSnapshotService({
      db: context.database,
      clock,
      timers: context.timers,
      logger: context.logger.child({ role: 'diagnostics', component: 'snapshots' }),
      dataDir: config.snapshotDataDir,
      maxUploadBytes: config.snapshotMaxBytes,
      concurrency: config.snapshotConcurrency,
      leaseMs: config.snapshotLeaseMs,
      owner: `${machineHostname()}:${process.pid}:${randomUUID()}`,
    });
    context.onRole('diagnostics', { start: () => service.start(), stop: () => service.stop() });
    const login = createLoginHandler({
      sessions: sessionsOf(context),
      checkCredentials: createCredentialCheck({
        diagnostics: createBasicAuthenticator(context.accounts, config.diagnosticsAccessProfile, { clock, backoff: { failuresBeforeBackoff: config.loginBackoffFailures } }),
        admin: context.adminAuthenticator,
        accounts: context.accounts,
        diagnosticsProfile: config.diagnosticsAccessProfile,
      }),
      cookie: { domain: config.diagnosticsCookieDomain, secure: config.diagnosticsSecureCookies, lifetimeSeconds: config.diagnosticsSessionLifetimeSeconds },
      location: (host) => `${diagnosticsUrlFor(host, diagnosticsUrl())}${LIST_PATH}`,
    });
    const { notAcceptable, ...operations } = createSnapshotHandlers({ service, baseUrl: diagnosticsUrl });
    return {
      // The login's answers (400, 401) come in the API's formats too: an Accept it cannot serve is 406 first.
      loginDiagnosticsUser: async (request) =>
        negotiate(request.headers.accept, RESOURCE_FORMATS) ? login.loginDiagnosticsUser(request) : notAcceptable(request),
      ...operations,
    } satisfies OperationHandlers<typeof Sdk>;
  },
} satisfies InterfaceModule;
