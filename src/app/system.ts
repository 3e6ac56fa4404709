import { ConfigError } from '../lib/config.ts';
import type { Config } from './config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createIdGenerator, type IdGenerator } from '../lib/ids.ts';
import { createMetrics, type Metrics } from '../lib/metrics.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { ResponseChecker } from '../lib/contract/response-check.ts';
import { openDatabase } from '../stores/open-database.ts';
import type { Database, PingResult } from '../stores/database.ts';
import { createAccountStore, type AccountStore } from '../accounts/account-store.ts';
import { ADMIN_PROFILE, bootstrapAdmin, type AdminCredentials } from '../accounts/admin-bootstrap.ts';
import { createBasicAuthenticator } from '../accounts/basic-auth.ts';
import { trustedProxies } from '../server/client-address.ts';
import type { HandlerMap } from '../server/handler-types.ts';
import type { HealthCheck, InterfaceModule, ModuleContext, TrafficView } from '../server/interface-module.ts';
import { buildInterfaceRuntimeFromFile, loadInterfaceRuntime, type InterfaceRuntime } from '../server/interface-runtime.ts';
import type { Authenticators } from '../server/security.ts';
import type { Stage } from '../server/stages.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { createRoleApp, type RoleApp, type RoleInterface } from '../server/role-app.ts';
import { createRoleServer, type RoleServer } from '../server/http-adapter.ts';
import { createReferencePages } from '../server/reference-pages.ts';
import { roleMapStage, type RoleMapSource } from '../server/role-map.ts';
import { registrationPageCors } from '../gateway/registration-route.ts';
import { createGatewayStages } from '../gateway/gateway-stages.ts';
import { createGatewayParts, type GatewayParts } from '../gateway/gateway-role.ts';
import type { CounterStore } from '../gateway/rate-limit/index.ts';
import { migrationsOf, MODULES } from './modules.ts';
import { checkPortsFree, listenFailure } from './port-check.ts';
import { DERIVED_FROM_PORT_ZERO } from '../interfaces/client-registration/settings.ts';

/** A role listening in this process: its app, its request path (the stages the adapter runs), where it listens. */
export type RunningRole = { role: RoleName; app: RoleApp; stages: readonly Stage[]; url: string; port: number };

export type System = {
  /** The configuration the system runs with. */
  config: Config;
  roles: readonly RunningRole[];
  database: Database;
  /** Users per access profile (the `admin` profile holds the administrative account). */
  accounts: AccountStore;
  metrics: Metrics;
  /** Per interface, the operations without a handler (they answer 501) (each module lists them in its `notImplemented`). */
  notImplemented: Readonly<Record<string, readonly string[]>>;
  url(role: RoleName): string;
  /**
   * Graceful stop: /health turns 503 on every role, `drainMs` later the listeners close, in-flight
   * requests finish (cut after `timeoutMs`), then the database closes.
   */
  stop(options?: { drainMs?: number; timeoutMs?: number }): Promise<void>;
};

export type SystemDependencies = {
  logger: Logger;
  clock: Clock;
  ids?: IdGenerator;
  /** The interfaces to serve (default: MODULES, src/app/modules.ts). */
  modules?: readonly InterfaceModule[];
  /** Replaces the handlers of some interfaces (tests, embedding). */
  handlers?: Readonly<Record<string, HandlerMap>>;
  /** Replaces the authenticators of some interfaces (tests that probe routing past security). */
  authenticators?: Readonly<Record<string, Authenticators>>;
  /** Shows a generated administrative password once (default: stdout; never the logger). */
  announce?: (message: string) => void;
  /** Times the request path's deadlines (body arrival, lingering closes); tests pass a fake clock. */
  timers?: Timers;
  /** Replaces the gateway's rate-limit counter store (tests: the deliberately naive one). */
  rateLimitStore?: CounterStore;
  /**
   * A worker of `portolan start --workers`: the primary already tried the ports (a worker's own exclusive
   * probe would collide with the ports its siblings share) and set up the administrative account (these
   * are its credentials: one generated password, announced once).
   */
  worker?: {
    admin: AdminCredentials;
    /** Every role the workers run together: one another worker runs (the device role) is in the role map too. */
    roles?: readonly RoleName[];
  };
};

/** A module's compiled contract: the shared one for the project's specs, a fresh one for a fixture's. */
function runtimeOf(module: InterfaceModule): Promise<InterfaceRuntime> {
  if (!module.specFile) return loadInterfaceRuntime(module.name as InterfaceName);
  return buildInterfaceRuntimeFromFile(module.name, module.specFile);
}

/**
 * The composition root: opens the store with every module's migrations, compiles each module's
 * contract once, builds each module's handlers and authenticators from one context, and starts each
 * role's listener with the modules whose specs serve on it.
 */
export async function startSystem(config: Config, deps: SystemDependencies): Promise<System> {
  const modules = deps.modules ?? MODULES;
  // Nothing is written (migrations, a generated password) before every port is known to be free.
  if (!deps.worker)
    await checkPortsFree(
      config.host,
      config.roles.map((role) => ({ role, port: config.ports[role] })),
    );
  const database = await openDatabase(config.database, { migrations: migrationsOf(modules), logger: deps.logger });
  const accounts = createAccountStore(database, { clock: deps.clock });
  const worker = deps.worker;
  const bootstrap = async () =>
    worker?.admin ??
    bootstrapAdmin(accounts, {
      adminUser: config.adminUser,
      adminPassword: config.adminPassword,
      logger: deps.logger,
      announce: deps.announce ?? ((message) => process.stdout.write(`${message}\n`)),
    });
  let runtimes: InterfaceRuntime[];
  let admin: AdminCredentials;
  // A configured password is hashed (scrypt, ~50 ms of a core, on libuv's threads) while this thread loads
  // the contracts. A generated one is made only once they loaded: a start that fails on a stale contract
  // leaves no account behind whose password nobody kept.
  const hashing = config.adminPassword === '' || worker ? undefined : bootstrap();
  hashing?.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  try {
    runtimes = await Promise.all(modules.map(runtimeOf));
    admin = await (hashing ?? bootstrap());
  } catch (error) {
    await hashing?.catch(() => undefined);
    await database.close();
    throw error;
  }
  // The response checks (tests only) load ajv's 2020 draft, and each spec's checker is built on its first check.
  const checkerOf = config.validateResponses ? await responseCheckers() : undefined;
  const adminAuthenticator = createBasicAuthenticator(accounts, ADMIN_PROFILE, {
    clock: deps.clock,
    backoff: { failuresBeforeBackoff: config.loginBackoffFailures },
  });
  const metrics = createMetrics();
  const ids = deps.ids ?? createIdGenerator();
  let draining = false;
  // Built once the other roles listen (its default pool member is this process's mapping role).
  let gateway: GatewayParts | undefined;
  const gatewayParts = () => {
    if (!gateway) throw new Error('the gateway role is not running in this process');
    return gateway;
  };
  const traffic: TrafficView = {
    poolStatus: () => gatewayParts().pool.status(),
    rateLimitStatus: (authorization) => gatewayParts().limiter.status(authorization),
    pingLimiter: (ms) => gatewayParts().limiter.ping(ms),
  };
  const proxies = trustedProxies(config.trustedProxies);
  const servers: RoleServer[] = [];
  const roles: RunningRole[] = [];
  // Read per request: a registration host derived from a gateway port of 0 becomes the port it got.
  const registrationRoute = {
    path: config.registrationPath,
    host: config.registrationHost,
    operationPath: '',
    maxBodyBytes: config.registrationMaxBodyBytes,
    sessionTimeoutSeconds: config.registrationSessionTimeoutSeconds,
    sessionLifetimeSeconds: config.registrationSessionLifetimeSeconds,
  };

  // Where each role listens: the port it got here, else its configured one (a role of another process).
  const portOf = (role: RoleName) => roles.find((running) => running.role === role)?.port;
  const rolePorts = () => Object.fromEntries(ROLE_NAMES.map((r) => [r, portOf(r) ?? config.ports[r]]));
  // The role map every role answers: the roles of this process, read per request.
  const roleMapSource: RoleMapSource = {
    kind: 'reference',
    registrationHost: () => (portOf('gateway') === undefined ? null : registrationRoute.host),
    roles: () => [
      ...roles.map((r) => ({ role: r.role, port: r.port, docs: config.referencePages, interfaces: r.app.specs.map((s) => s.name) })),
      // With --workers, a role run by another worker listens on the port every worker was given.
      ...(deps.worker?.roles ?? [])
        .filter((role) => portOf(role) === undefined)
        .map((role) => ({
          role,
          port: config.ports[role],
          docs: config.referencePages,
          interfaces: served.filter((s) => s.runtime.operations.some((op) => op.roles.includes(role))).map((s) => s.runtime.name),
        })),
    ],
  };

  const roleChecks = new Map<string, HealthCheck[]>();
  const lifecycles: { role: RoleName; start(): Promise<void>; stop(): Promise<void> }[] = [];
  const started: { stop(): Promise<void> }[] = [];
  const stopModules = async () => {
    for (const hooks of started.splice(0).reverse()) await hooks.stop();
  };
  const baseContext = {
    config,
    clock: deps.clock,
    logger: deps.logger,
    ids,
    database,
    accounts,
    admin,
    adminAuthenticator,
    roleUrl: (role: RoleName) => roles.find((r) => r.role === role)?.url,
    traffic: () => traffic,
    healthChecks: (role: string) => ({ database: (ms: number) => database.ping(ms), services: roleChecks.get(role) ?? [] }),
    isDraining: () => draining,
    timers: deps.timers ?? systemTimers,
    onRole: (role: RoleName, hooks: { start(): Promise<void>; stop(): Promise<void> }) => void lifecycles.push({ role, ...hooks }),
  };
  // The gateway is ready only with a pool member in rotation (G); the limiter adds its own check (E).
  const poolInRotation: HealthCheck = async (): Promise<PingResult> =>
    gatewayParts().pool.status().membersUp > 0 ? { ok: true } : { ok: false, reason: `no member of pool ${config.poolName} is up` };
  roleChecks.set('gateway', [poolInRotation]);

  const served: RoleInterface[] = modules.map((module, index) => {
    const runtime = runtimes[index]!;
    const context: ModuleContext = { ...baseContext, runtime };
    for (const [role, checks] of Object.entries(module.healthChecks?.(context) ?? {}))
      roleChecks.set(role, [...(roleChecks.get(role) ?? []), ...(checks ?? [])]);
    return {
      runtime,
      handlers: deps.handlers?.[module.name] ?? completeHandlers(module, runtime, module.create(context)),
      renderError: module.errorShape(deps.clock),
      ...(module.unrouted ? { unrouted: (path: string) => module.unrouted!(path) } : {}),
      authenticators: deps.authenticators?.[module.name] ?? module.authenticators?.(context) ?? {},
      // One compiled response checker per spec, shared by every role that serves it (tests only).
      ...(checkerOf ? { checkResponse: checkerOf(runtime.document) } : {}),
    };
  });
  const rendererOf = (name: string) => served.find((s) => s.runtime.name === name)!.renderError;

  try {
    // The gateway starts last: its pool defaults to the mapping role started before it.
    const order = [...config.roles].sort((a, b) => Number(a === 'gateway') - Number(b === 'gateway'));
    for (const role of order) {
      const app = createRoleApp({
        role,
        fallbackInterface: ROLE_DEFINITIONS[role].fallbackInterface,
        bodyLimitBytes: config.bodyLimitBytes,
        bodyTimeoutMs: config.bodyTimeoutMs,
        ...(deps.timers ? { timers: deps.timers } : {}),
        logger: deps.logger,
        interfaces: served.filter((s) => s.runtime.operations.some((op) => op.roles.includes(role))),
      });
      const own: readonly Stage[] = role === 'gateway' ? await gatewayStages(app) : [(request) => app.handle(request)];
      // The role map first (before the gateway's pool), then, with the reference pages on, the CORS the
      // gateway's page needs to try registration at the registration host; then the role's own stages.
      const stages: readonly Stage[] = [
        roleMapStage(roleMapSource, app.renderError),
        ...(role === 'gateway' && config.referencePages
          ? [registrationPageCors(registrationRoute, () => portOf('gateway') ?? 0, own)]
          : []),
        ...own,
      ];
      const referencePages = config.referencePages
        ? createReferencePages({
            role,
            specs: app.specs,
            rolePorts,
            authorization: {
              adminUser: config.adminUser,
              registrationAccessProfile: config.registrationAccessProfile,
            },
            ...(role === 'gateway'
              ? {
                  registration: () => ({
                    host: registrationRoute.host,
                    path: registrationRoute.path,
                    operationPath: registrationRoute.operationPath,
                  }),
                }
              : {}),
          })
        : undefined;
      const server = createRoleServer({
        role,
        stages,
        renderError: app.renderError,
        limits: config,
        logger: deps.logger,
        metrics,
        referencePages,
        trustedProxies: proxies,
        ...(deps.timers ? { timers: deps.timers } : {}),
      });
      const address = await server.listen(config.ports[role], config.host).catch((error: NodeJS.ErrnoException) => {
        throw listenFailure(role, config.host, config.ports[role], error.code);
      });
      servers.push(server);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      roles.push({ role, app, stages, port: address.port, url: `http://${host}:${address.port}` });
      if (role === 'gateway' && registrationRoute.host === DERIVED_FROM_PORT_ZERO) registrationRoute.host = `localhost:${address.port}`;
    }
    roles.sort((a, b) => ROLE_NAMES.indexOf(a.role) - ROLE_NAMES.indexOf(b.role));
    for (const hooks of lifecycles.filter((l) => config.roles.includes(l.role))) {
      // Listed before it starts: a start that fails half-way is still stopped (stop hooks bear a second call).
      started.push(hooks);
      await hooks.start();
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.close(0)));
    await stopModules();
    await gateway?.close();
    await database.close();
    throw error;
  }

  async function gatewayStages(app: RoleApp) {
    const mapping = roles.find((r) => r.role === 'mapping');
    const members = config.poolMembers.length > 0 ? config.poolMembers : mapping ? [{ host: config.host, port: mapping.port }] : [];
    if (members.length === 0)
      throw new ConfigError(['PORTOLAN_POOL_MEMBERS is required when the mapping role does not run in this process']);
    gateway = await createGatewayParts(config, {
      clock: deps.clock,
      logger: deps.logger,
      metrics,
      members,
      ...(deps.rateLimitStore ? { counterStore: deps.rateLimitStore } : {}),
    });
    registrationRoute.operationPath = app.operations.find((op) => op.operationId === 'registerClient')!.path;
    return createGatewayStages({
      app,
      renderError: rendererOf('rate-limit'),
      limiter: gateway.limiter,
      proxy: gateway.proxy,
      registration: registrationRoute,
      logger: deps.logger.child({ role: 'gateway' }),
    });
  }
  return {
    config:
      registrationRoute.host === config.registrationHost ? config : Object.freeze({ ...config, registrationHost: registrationRoute.host }),
    roles,
    database,
    accounts,
    metrics,
    notImplemented: Object.fromEntries(
      served
        .map((s) => [s.runtime.name, s.runtime.operations.filter((op) => !s.handlers[op.operationId]).map((op) => op.operationId)])
        .filter(([, ops]) => ops!.length > 0),
    ),
    url: (role) => {
      const running = roles.find((r) => r.role === role);
      if (!running) throw new Error(`the ${role} role does not run in this process (PORTOLAN_ROLES)`);
      return running.url;
    },
    stop: async ({ drainMs = 0, timeoutMs = config.shutdownTimeoutMs } = {}) => {
      draining = true;
      if (drainMs > 0) await new Promise<void>((resolve) => (deps.timers ?? systemTimers).after(drainMs, resolve));
      await Promise.all(servers.map((s) => s.close(timeoutMs)));
      await stopModules();
      await gateway?.close();
      await database.close();
    },
  };
}

/**
 * A module's handlers cover its spec: every operation has one or is listed in `notImplemented`, and
 * nothing is listed that has one (the type checker says so for modules typed by their SDK; this holds
 * for any module, an embedder's too).
 */
function completeHandlers(module: InterfaceModule, runtime: InterfaceRuntime, handlers: HandlerMap): HandlerMap {
  const listed = new Set(module.notImplemented ?? []);
  for (const { operationId } of runtime.operations) {
    if (!handlers[operationId] && !listed.has(operationId))
      throw new Error(`interface ${module.name}: operation ${operationId} has no handler and is not listed in its notImplemented`);
    if (handlers[operationId] && listed.has(operationId))
      throw new Error(`interface ${module.name}: operation ${operationId} has a handler but is listed in its notImplemented`);
  }
  const known = new Set(runtime.operations.map((op) => op.operationId));
  const stray = Object.keys(handlers).filter((id) => !known.has(id));
  if (stray.length > 0) throw new Error(`interface ${module.name}: handlers for operations its spec does not have: ${stray.join(', ')}`);
  return handlers;
}

/** A spec's response checker, built on its first check (ajv compiles the document then): a mock start pays only for the specs it is asked about. */
async function responseCheckers(): Promise<(document: InterfaceRuntime['document']) => ResponseChecker> {
  const { createResponseChecker } = await import('../lib/contract/response-check.ts');
  return (document) => {
    let check: ResponseChecker | undefined;
    return (operation, response) => (check ??= createResponseChecker(document))(operation, response);
  };
}
