import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { hostname as machineHostname, networkInterfaces } from 'node:os';
import type * as Sdk from '../../../generated/snapshots/sdk.gen.ts';
import { createBasicAuthenticator } from '../../accounts/basic-auth.ts';
import type { CoreConfig } from '../../lib/config.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule, type ModuleContext } from '../../server/interface-module.ts';
import { renderSnapshotsError } from './error-shape.ts';
import { createCredentialCheck, createLoginHandler, sessionScheme } from './login-handlers.ts';
import { diagnosticsLinkBase, diagnosticsUrlFor, reachableUrl } from './diagnostics-url.ts';
import { diagnosticsSiteOf } from './diagnostics-site.ts';
import { inflatedBudgetLimits } from './engine/index.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSessionStore } from './session-store.ts';
import { SNAPSHOT_SETTINGS, type SnapshotConfig } from './settings.ts';
import { negotiate, RESOURCE_FORMATS } from './formats/index.ts';
import { createGuiHandlers } from './gui-handlers.ts';
import { createSnapshotHandlers } from './snapshot-handlers.ts';
import { createSnapshotService } from './snapshot-service.ts';
import { createUpdateBodyReader, UPDATE_REQUEST_SCHEMA } from './update-body-handlers.ts';

type Config = CoreConfig & SnapshotConfig;

const LIST_PATH = '/snapshot-analyzer/api/snapshots';

/** Every address of this machine's interfaces, as the OS reports them at start (a wildcard listener accepts on each). */
const interfaceAddresses = (): string[] =>
  Object.values(networkInterfaces()).flatMap((addresses) => (addresses ?? []).map((entry) => entry.address));

const sessionsOf = (context: ModuleContext<Config>) =>
  createSessionStore(context.database, {
    clock: context.clock,
    lifetimeSeconds: context.config.diagnosticsSessionLifetimeSeconds,
    idleSeconds: context.config.diagnosticsSessionIdleSeconds,
  });

/**
 * Interface C, the snapshot diagnostics API (diagnostics role) and its login server (login role): a
 * form login that sets the session cookies, sessions in the store, snapshots per account streamed to
 * disk and processed by a bounded queue on the job port, every format the spec names.
 */
export const snapshotsModule = defineModule({
  name: 'snapshots',
  settings: SNAPSHOT_SETTINGS,
  migrations: SNAPSHOT_MIGRATIONS,
  errorShape: () => renderSnapshotsError,
  authenticators: (context) => ({ ssoSession: sessionScheme(sessionsOf(context)) }),
  create: (context) => {
    const { config, clock } = context;
    // A wildcard listener (0.0.0.0, ::) is no address a client can follow: links name the machine instead.
    const diagnosticsUrl = () =>
      reachableUrl(context.roleUrl('diagnostics') ?? `http://${config.host}:${config.ports.diagnostics}`, machineHostname());
    const service = createSnapshotService({
      db: context.database,
      clock,
      timers: context.timers,
      logger: context.logger.child({ role: 'diagnostics', component: 'snapshots' }),
      dataDir: config.snapshotDataDir,
      maxUploadBytes: config.snapshotMaxBytes,
      concurrency: config.snapshotConcurrency,
      leaseMs: config.snapshotLeaseMs,
      extractLimits: inflatedBudgetLimits(config.snapshotMaxInflatedBytes),
      timeBudgetMs: config.snapshotTimeBudgetMs,
      maxAttempts: config.snapshotMaxAttempts,
      owner: `${machineHostname()}:${process.pid}:${randomUUID()}`,
      accountLimits: { bytes: config.snapshotAccountQuotaBytes, snapshots: config.snapshotAccountMaxSnapshots },
      jobRetentionMs: config.snapshotJobRetentionSeconds * 1000,
    });
    context.onRole('diagnostics', { start: () => service.start(), stop: () => service.stop() });
    // On a wildcard listener a client at one of the machine's addresses keeps it (its host-only cookie goes there).
    const site = diagnosticsSiteOf(config, (role) => context.roleUrl(role), machineHostname(), interfaceAddresses());
    const login = createLoginHandler({
      sessions: sessionsOf(context),
      checkCredentials: createCredentialCheck({
        diagnostics: createBasicAuthenticator(context.accounts, config.diagnosticsAccessProfile, {
          clock,
          backoff: { failuresBeforeBackoff: config.loginBackoffFailures },
        }),
        admin: context.adminAuthenticator,
        accounts: context.accounts,
        diagnosticsProfile: config.diagnosticsAccessProfile,
      }),
      cookie: {
        domain: config.diagnosticsCookieDomain,
        secure: config.diagnosticsSecureCookies,
        lifetimeSeconds: config.diagnosticsSessionLifetimeSeconds,
      },
      site,
      location: (host) => `${diagnosticsUrlFor(site, host, diagnosticsUrl())}${LIST_PATH}`,
    });
    // ajv's 2020 draft is loaded with the first update, not at start.
    let updateSchema: Promise<ValidateFunction> | undefined;
    const loadUpdateSchema = () =>
      (updateSchema ??= import('../../lib/spec-ajv.ts').then(
        ({ createSpecValidator }) => createSpecValidator(context.runtime.document).ajv.compile(UPDATE_REQUEST_SCHEMA),
        (error: unknown) => {
          updateSchema = undefined;
          throw error;
        },
      ));
    const { notAcceptable, ...operations } = createSnapshotHandlers({
      service,
      linkBase: (host) => diagnosticsLinkBase(site, host, diagnosticsUrl()),
      readUpdate: createUpdateBodyReader(loadUpdateSchema),
    });
    return {
      // The login's answers (400, 401) come in the API's formats too: an Accept it cannot serve is 406 first.
      loginDiagnosticsUser: async (request) =>
        negotiate(request.headers.accept, RESOURCE_FORMATS) ? login.loginDiagnosticsUser(request) : notAcceptable(request),
      ...operations,
      ...createGuiHandlers({ service, linkBase: (host) => diagnosticsLinkBase(site, host, diagnosticsUrl()) }),
    } satisfies OperationHandlers<typeof Sdk>;
  },
});
