import { ConfigError, type Config } from '../lib/config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createIdGenerator, type IdGenerator } from '../lib/ids.ts';
import { createMetrics, type Metrics } from '../lib/metrics.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import { INTERFACES, type InterfaceName } from '../lib/spec-catalog.ts';
import { createResponseChecker } from '../lib/contract/response-check.ts';
import { openDatabase } from '../stores/open-database.ts';
import type { Database } from '../stores/database.ts';
import { createErrorRenderers } from '../interfaces/error-shapes.ts';
import { createHandlers } from '../interfaces/handler-registry.ts';
import { createAccountStore, type AccountStore } from '../accounts/account-store.ts';
import { ADMIN_PROFILE, bootstrapAdmin } from '../accounts/admin-bootstrap.ts';
import { createBasicAuthenticator } from '../accounts/basic-auth.ts';
import { createSqlDeviceOauthStore } from '../interfaces/device-config/oauth-store.ts';
import { createClientRegistrationDependencies } from '../interfaces/client-registration/compose.ts';
import { ALL_MIGRATIONS } from '../interfaces/migrations.ts';
import { buildApiIndex } from '../interfaces/mapping/api-index.ts';
import { createSqlMappingStore } from '../interfaces/mapping/store.ts';
import { createAccessSessionDependencies } from '../interfaces/access-session/compose.ts';
import type { HandlerMap } from './handler-types.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';
import { createRoleApp, type RoleApp } from './role-app.ts';
import { createRoleServer, type RoleServer } from './http-adapter.ts';
import { createGatewayServer } from '../gateway/gateway-server.ts';
import { createGatewayParts, type GatewayParts } from '../gateway/gateway-role.ts';
import type { CounterStore } from '../gateway/rate-limit/index.ts';
import type { PingResult } from '../stores/database.ts';

export type RunningRole = { role: RoleName; app: RoleApp; url: string; port: number };

export type System = {
  /** The configuration the system runs with. */
  config: Config;
  roles: readonly RunningRole[];
  database: Database;
  /** Users per access profile (the `admin` profile holds the administrative account). */
  accounts: AccountStore;
  metrics: Metrics;
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
  /** Replaces the handlers of some interfaces (tests, embedding). */
  handlers?: Partial<Record<InterfaceName, HandlerMap>>;
  /** Shows a generated administrative password once (default: stdout; never the logger). */
  announce?: (message: string) => void;
  /** Replaces the gateway's rate-limit counter store (tests: the deliberately naive one). */
  rateLimitStore?: CounterStore;
};

/** The composition root: opens the store, loads every spec once, builds each role and listens. */
export async function startSystem(config: Config, deps: SystemDependencies): Promise<System> {
  const runtimes = await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
  const database = await openDatabase(config.database, { migrations: ALL_MIGRATIONS, logger: deps.logger });
  const accounts = createAccountStore(database, { clock: deps.clock });
  const admin = await bootstrapAdmin(accounts, {
    adminUser: config.adminUser,
    adminPassword: config.adminPassword,
    logger: deps.logger,
    announce: deps.announce ?? ((message) => process.stdout.write(`${message}\n`)),
  });
  const adminAuthenticator = createBasicAuthenticator(accounts, ADMIN_PROFILE, { clock: deps.clock });
  const metrics = createMetrics();
  let draining = false;
  // Built once the other roles listen (its default pool member is this process's mapping role).
  let gateway: GatewayParts | undefined;
  const gatewayParts = () => {
    if (!gateway) throw new Error('the gateway role is not running in this process');
    return gateway;
  };
  const poolInRotation = async (): Promise<PingResult> =>
    gatewayParts().pool.status().membersUp > 0 ? { ok: true } : { ok: false, reason: `no member of pool ${config.poolName} is up` };
  const renderers = createErrorRenderers(deps.clock);
  const handlers = {
    ...createHandlers({
      mapping: {
        store: createSqlMappingStore(database),
        ids: deps.ids ?? createIdGenerator(),
        apiIndex: buildApiIndex(runtimes.find((r) => r.name === 'mapping')!.document),
      },
      health: {
        // Every role shares the one database; roles with outside dependencies add their checks here.
        checksFor: (role) => ({
          database: (ms) => database.ping(ms),
          // The gateway is ready when its pool has a member in rotation and its counter store answers.
          services: role === 'gateway' ? [poolInRotation, (ms) => gatewayParts().limiter.ping(ms)] : [],
        }),
        poolStatus: () => gatewayParts().pool.status(),
        clock: deps.clock,
        timeoutMs: config.healthCheckTimeoutMs,
        isDraining: () => draining,
      },
      deviceConfig: { store: createSqlDeviceOauthStore(database, { clock: deps.clock }), authenticate: adminAuthenticator },
      // The device role listens after the gateway, so its URL is looked up at each registration.
      clientRegistration: createClientRegistrationDependencies({ config, accounts, admin, clock: deps.clock, logger: deps.logger, deviceRoleUrl: () => roles.find((r) => r.role === 'device')?.url }),
      rateLimit: { status: (authorization) => gatewayParts().limiter.status(authorization), logger: deps.logger },
      accessSession: createAccessSessionDependencies({ database, config, clock: deps.clock, authenticate: adminAuthenticator }),
    }),
    ...deps.handlers,
  };
  // One compiled response checker per spec, shared by every role that serves it (tests only).
  const checkers = new Map(runtimes.map((r) => [r.name, config.validateResponses ? createResponseChecker(r.document) : undefined]));
  const servers: RoleServer[] = [];
  const roles: RunningRole[] = [];
  try {
    // The gateway starts last: its pool defaults to the mapping role started before it.
    const order = [...config.roles].sort((a, b) => Number(a === 'gateway') - Number(b === 'gateway'));
    for (const role of order) {
      const served = runtimes.filter((r) => r.operations.some((op) => op.roles.includes(role)));
      const fallbackInterface = ROLE_DEFINITIONS[role].fallbackInterface;
      const app = createRoleApp({
        role,
        fallbackInterface,
        logger: deps.logger,
        interfaces: served.map((runtime) => ({
          runtime,
          handlers: handlers[runtime.name] ?? {},
          renderError: renderers[runtime.name],
          ...(checkers.get(runtime.name) ? { checkResponse: checkers.get(runtime.name)! } : {}),
        })),
      });
      const server = role === 'gateway'
        ? await startGatewayServer(app)
        : createRoleServer({ app, renderError: renderers[fallbackInterface], bodyLimitBytes: config.bodyLimitBytes, logger: deps.logger, metrics });
      const address = await server.listen(config.ports[role], config.host);
      servers.push(server);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      roles.push({ role, app, port: address.port, url: `http://${host}:${address.port}` });
    }
    roles.sort((a, b) => ROLE_NAMES.indexOf(a.role) - ROLE_NAMES.indexOf(b.role));
  } catch (error) {
    await Promise.all(servers.map((s) => s.close(0)));
    await gateway?.close();
    await database.close();
    throw error;
  }

  async function startGatewayServer(app: RoleApp) {
    const mapping = roles.find((r) => r.role === 'mapping');
    const members = config.poolMembers.length > 0 ? config.poolMembers : mapping ? [{ host: config.host, port: mapping.port }] : [];
    if (members.length === 0) throw new ConfigError(['PORTOLAN_POOL_MEMBERS is required when the mapping role does not run in this process']);
    gateway = await createGatewayParts(config, {
      clock: deps.clock,
      logger: deps.logger,
      metrics,
      members,
      ...(deps.rateLimitStore ? { counterStore: deps.rateLimitStore } : {}),
    });
    const registrationPath = runtimes.find((r) => r.name === 'client-registration')!.operations.find((op) => op.operationId === 'registerClient')!.path;
    return createGatewayServer({
      app,
      renderError: renderers['rate-limit'],
      renderRegistrationError: renderers['client-registration'],
      limiter: gateway.limiter,
      proxy: gateway.proxy,
      registration: {
        path: config.registrationPath,
        host: config.registrationHost,
        operationPath: registrationPath,
        maxBodyBytes: config.registrationMaxBodyBytes,
        sessionTimeoutSeconds: config.registrationSessionTimeoutSeconds,
        sessionLifetimeSeconds: config.registrationSessionLifetimeSeconds,
      },
      bodyLimitBytes: config.bodyLimitBytes,
      logger: deps.logger,
      metrics,
    });
  }
  return {
    config,
    roles,
    database,
    accounts,
    metrics,
    url: (role) => {
      const running = roles.find((r) => r.role === role);
      if (!running) throw new Error(`the ${role} role does not run in this process (PORTOLAN_ROLES)`);
      return running.url;
    },
    stop: async ({ drainMs = 0, timeoutMs = config.shutdownTimeoutMs } = {}) => {
      draining = true;
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      await Promise.all(servers.map((s) => s.close(timeoutMs)));
      await gateway?.close();
      await database.close();
    },
  };
}
