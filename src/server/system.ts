import type { Config } from '../lib/config.ts';
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
import { ALL_MIGRATIONS } from '../interfaces/migrations.ts';
import { buildApiIndex } from '../interfaces/mapping/api-index.ts';
import { createSqlMappingStore } from '../interfaces/mapping/store.ts';
import type { HandlerMap } from './handler-types.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';
import { createRoleApp, type RoleApp } from './role-app.ts';
import { createRoleServer, type RoleServer } from './http-adapter.ts';

export type RunningRole = { role: RoleName; app: RoleApp; url: string; port: number };

export type System = {
  roles: readonly RunningRole[];
  database: Database;
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
};

/** The composition root: opens the store, loads every spec once, builds each role and listens. */
export async function startSystem(config: Config, deps: SystemDependencies): Promise<System> {
  const runtimes = await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
  const database = await openDatabase(config.database, { migrations: ALL_MIGRATIONS, logger: deps.logger });
  const metrics = createMetrics();
  let draining = false;
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
        checksFor: () => ({ database: (ms) => database.ping(ms), services: [] }),
        clock: deps.clock,
        timeoutMs: config.healthCheckTimeoutMs,
        isDraining: () => draining,
      },
    }),
    ...deps.handlers,
  };
  // One compiled response checker per spec, shared by every role that serves it (tests only).
  const checkers = new Map(runtimes.map((r) => [r.name, config.validateResponses ? createResponseChecker(r.document) : undefined]));
  const servers: RoleServer[] = [];
  const roles: RunningRole[] = [];
  try {
    for (const role of ROLE_NAMES) {
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
      const server = createRoleServer({ app, renderError: renderers[fallbackInterface], bodyLimitBytes: config.bodyLimitBytes, logger: deps.logger, metrics });
      const address = await server.listen(config.ports[role], config.host);
      servers.push(server);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      roles.push({ role, app, port: address.port, url: `http://${host}:${address.port}` });
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.close(0)));
    await database.close();
    throw error;
  }
  return {
    roles,
    database,
    metrics,
    url: (role) => roles.find((r) => r.role === role)!.url,
    stop: async ({ drainMs = 0, timeoutMs = config.shutdownTimeoutMs } = {}) => {
      draining = true;
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      await Promise.all(servers.map((s) => s.close(timeoutMs)));
      await database.close();
    },
  };
}
