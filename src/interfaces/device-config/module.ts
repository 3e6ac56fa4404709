import { createHash, randomUUID } from 'node:crypto';
import { hostname as machineHostname } from 'node:os';
import type * as Sdk from '../../../generated/device-config/sdk.gen.ts';
import { createTokenService } from '../../accounts/auth-tokens.ts';
import type { CoreConfig } from '../../lib/config.ts';
import { portolanError } from '../../lib/errors.ts';
import type { ValidateFunction } from 'ajv';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule, type ModuleContext } from '../../server/interface-module.ts';
import { basicScheme, headerTokenScheme } from '../../server/security.ts';
import { createDataPlane } from '../../traffic/data-plane.ts';
import { compileRules } from '../../traffic/irules/index.ts';
import { createAppsvcsExtraHandlers } from './appsvcs-extra-handlers.ts';
import { createAppsvcsHandlers } from './appsvcs-handlers.ts';
import { createPerAppOperations } from './appsvcs-per-app.ts';
import { createSqlSettingsStore } from './appsvcs-settings.ts';
import { createAuthHandlers } from './auth-handlers.ts';
import { createSqlDeviceConfigStore } from './config-store.ts';
import { accessLoggingOn, type DbValues } from './db-variables.ts';
import { parsedTask } from './declaration-store.ts';
import { createDeviceRole } from './device-role.ts';
import { createFailoverHandlers } from './failover-handlers.ts';
import { holderGone, newHolderId } from './lease-holder.ts';
import { passingOnWrites } from './pass-on-handlers.ts';
import { APPSVCS_INFO, DEVICE_VERSION } from './device-version.ts';
import { renderDeviceError } from './error-shape.ts';
import { createDeviceConfigHandlers } from './handlers.ts';
import { readHostFacts } from './host-facts.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './migrations.ts';
import { createSqlDeviceOauthStore } from './oauth-store.ts';
import { createRuleHandlers } from './rule-handlers.ts';
import { createSnapshotHandlers } from './snapshot-handlers.ts';
import type { SnapshotSources } from './snapshot-source.ts';
import { DEVICE_SETTINGS, type DeviceConfig } from './settings.ts';
import { createSystemHandlers } from './system-handlers.ts';

/** The version of the declarative deployment service this device answers as (`/info`). */
type Config = CoreConfig & DeviceConfig;

const APPSVCS_ROOT = '/mgmt/shared/appsvcs';

const DEPLOY_INFO = { ...APPSVCS_INFO };

/** A deployment passed on by the standby process may take this long on the active one (megabytes take seconds). */
const PASS_ON_TIMEOUT_MS = 120_000;
/** The active process's answer passed back at most (a deployment's answer repeats its declaration). */
const PASS_ON_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const tokensOf = (context: ModuleContext<Config>) =>
  createTokenService(context.database, {
    clock: context.clock,
    issuer: 'device',
    accessTimeoutSeconds: context.config.deviceTokenTimeoutSeconds,
  });

const hostnameOf = (config: Config) => config.deviceHostname || machineHostname();

/** A stable id for this device: derived from its host name (the real device's machine id is a UUID too). */
function machineIdOf(hostname: string) {
  const hex = createHash('sha256').update(`portolan-device:${hostname}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Interface F, the device's management interface: basic authentication or a login token on every
 * operation (the real device's), script objects, system database variables that act on the data
 * plane, declarative deployment whose services carry traffic, the OAuth objects registration calls,
 * and a diagnostic snapshot of its own state (the archive interface C takes).
 */
export const deviceConfigModule = defineModule({
  name: 'device-config',
  settings: DEVICE_SETTINGS,
  migrations: DEVICE_CONFIG_MIGRATIONS,
  errorShape: () => renderDeviceError,
  // The real extension answers any other path under its root 400 `Bad Request: Invalid path`, not 404.
  unrouted: (path: string) =>
    path === APPSVCS_ROOT || path.startsWith(`${APPSVCS_ROOT}/`)
      ? renderDeviceError(portolanError('invalidPath'), { headers: {} })
      : undefined,
  authenticators: (context) => {
    const tokens = tokensOf(context);
    // The real product's challenge and messages; the answer never repeats what was sent.
    return {
      basicAuth: basicScheme(context.adminAuthenticator, {
        missing: 'Authorization failed: no user authentication header or token detected.',
        wrong: 'Authentication failed.',
        challenge: 'Basic realm="Enterprise Manager"',
      }),
      vendorAuthToken: headerTokenScheme('X-Vendor-Auth-Token', (token) => tokens.verify(token), {
        missing: 'Authorization failed: no user authentication header or token detected.',
        invalid: 'X-Vendor-Auth-Token does not exist or has expired.',
        challenge: 'Basic realm="Enterprise Manager"',
      }),
    };
  },
  create: (context) => {
    const { config, clock, logger } = context;
    const hostname = hostnameOf(config);
    const configStore = createSqlDeviceConfigStore(context.database);
    const dataPlane = createDataPlane({
      portOffset: config.devicePortOffset,
      clock,
      timers: context.timers,
      logger: logger.child({ role: 'device', component: 'data-plane' }),
      dataDir: config.deviceDataDir,
      ruleBudget: { maxSteps: config.deviceRuleMaxSteps, maxMs: config.deviceRuleMaxMs },
    });
    let appliedDbValues = '';
    const applyDbValues = async (values: DbValues) => {
      appliedDbValues = JSON.stringify(values);
      dataPlane.setEventLevel(values['dataplane.quic.log.level']);
      dataPlane.setAccessLogging(accessLoggingOn(values['log.access.level']));
      await dataPlane.setQlogging(values['quic.qlogging'] === 'enable');
    };
    // Loaded on the first deployment: ajv's 2020 draft costs ~60 ms of every start otherwise.
    let schemas: Promise<(pointer: string) => ValidateFunction> | undefined;
    const loadSchemas = () =>
      (schemas ??= import('../../lib/spec-ajv.ts').then(
        ({ createSpecValidator }) => {
          const specs = createSpecValidator(context.runtime.document);
          return (pointer: string) => specs.at(pointer);
        },
        (error: unknown) => {
          schemas = undefined; // tried again on the next deployment
          throw error;
        },
      ));
    // The device pair (device-pair.ts): the process holding the active lease serves the data plane and deploys.
    // A wildcard listener (0.0.0.0, ::) is no address the other process can reach: the machine's name stands in
    // (PORTOLAN_DEVICE_ADVERTISE_URL says better), never a URL the other process would read as its own localhost.
    const ownUrl = () =>
      config.deviceAdvertiseUrl ||
      (context.roleUrl('device') ?? `http://${config.host}:${config.ports.device}`).replace(
        /^http:\/\/(?:0\.0\.0\.0|\[::\])(?=:)/,
        `http://${machineHostname()}`,
      );
    // A value saved through the other process of the pair reaches this one's data plane at its next renewal.
    const applySavedDbValues = async () => {
      const { values } = await configStore.dbVariables();
      if (JSON.stringify(values) !== appliedDbValues) await applyDbValues(values);
    };
    const device = createDeviceRole({
      db: context.database,
      holder: newHolderId(),
      url: ownUrl,
      leaseMs: config.deviceLeaseMs,
      holderGone: (previous) => holderGone(previous),
      // A saved value the data plane cannot take now (say, the data directory went read-only) is
      // logged; the device still starts and serves its tenants.
      beforeActive: () =>
        applySavedDbValues().catch((error: unknown) =>
          logger.error({ err: error }, 'the saved system database variables could not all be applied'),
        ),
      onRenewed: applySavedDbValues,
      dataPlane,
      // A service's `{bigip: "/Common/name"}` rule is the script object stored at /mgmt/tm/traffic/rule.
      rules: {
        stored: async (path) => {
          const [, partition = '', ...name] = path.split('/');
          return (await configStore.getRule(partition, name.join('/')))?.apiAnonymous;
        },
        compile: compileRules,
      },
      clock,
      logger: logger.child({ role: 'device', component: 'appsvcs' }),
      hostname,
      info: DEPLOY_INFO,
      schemas: loadSchemas,
      document: context.runtime.document,
      timers: context.timers,
      newTaskId: randomUUID,
    });
    const { pair, service } = device;
    context.onRole('device', {
      start: () => device.start(),
      stop: async () => {
        await device.stop();
        await dataPlane.close();
      },
    });
    const identity = { hostname, machineId: machineIdOf(hostname) };
    // What the device's diagnostic snapshot reads: never the accounts, tokens or OAuth objects.
    const snapshotSources: SnapshotSources = {
      identity,
      version: DEVICE_VERSION,
      clock,
      declaration: async () => {
        const text = await service.declaration();
        // Parsed here: the snapshot redacts secrets anywhere in it (a snapshot is an administrator's rare request).
        return text === undefined ? undefined : JSON.parse(text);
      },
      dbVariables: async () => (await configStore.dbVariables()).values,
      scripts: async () => configStore.listRules(),
      deployTasks: async () => (await device.store.listTasks(100)).map(parsedTask), // all the service keeps
      hostFacts: () => readHostFacts(config.deviceDataDir),
    };
    // PATCH, the per-application API and /settings (designed after the real extension): deployments go to the active process.
    const settings = createSqlSettingsStore(context.database);
    const { getDeploySettings, updateDeploySettings, ...appsvcsDeploying } = createAppsvcsExtraHandlers({
      service,
      schemas: loadSchemas,
      schemaCurrent: DEPLOY_INFO.schemaCurrent,
      settings,
      perApp: createPerAppOperations({ service, settings, schemaCurrent: DEPLOY_INFO.schemaCurrent }),
    });
    return {
      getDeploySettings,
      updateDeploySettings,
      ...createDeviceConfigHandlers({ store: createSqlDeviceOauthStore(context.database, { clock }) }),
      ...createAuthHandlers({ tokens: tokensOf(context), checkPassword: context.adminAuthenticator }),
      ...createRuleHandlers({ store: configStore }),
      ...createSystemHandlers({ store: configStore, identity, apply: applyDbValues }),
      ...createSnapshotHandlers({ sources: snapshotSources }),
      ...passingOnWrites(
        { ...createAppsvcsHandlers({ service }), ...appsvcsDeploying },
        {
          status: () => pair.status(),
          ownUrl,
          timers: context.timers,
          timeoutMs: PASS_ON_TIMEOUT_MS,
          maxAnswerBytes: PASS_ON_MAX_ANSWER_BYTES,
        },
      ),
      ...createFailoverHandlers({ status: () => pair.status() }),
    } satisfies OperationHandlers<typeof Sdk>;
  },
});
