import type { Config } from '../lib/config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import { INTERFACES, type InterfaceName } from '../lib/spec-catalog.ts';
import type { HandlerMap } from './handler-types.ts';
import { createResponseChecker } from '../lib/contract/response-check.ts';
import { createErrorRenderers } from '../interfaces/error-shapes.ts';
import { createHandlers } from '../interfaces/handler-registry.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';
import { createRoleApp, type RoleApp } from './role-app.ts';
import { createRoleServer, type RoleServer } from './http-adapter.ts';

export type RunningRole = { role: RoleName; app: RoleApp; url: string; port: number };

export type System = {
  roles: readonly RunningRole[];
  url(role: RoleName): string;
  stop(): Promise<void>;
};

/** The composition root: loads every spec once, builds each role and listens on its port. */
export type SystemDependencies = {
  logger: Logger;
  clock: Clock;
  /** Replaces the handlers of some interfaces (tests, embedding). */
  handlers?: Partial<Record<InterfaceName, HandlerMap>>;
};

export async function startSystem(config: Config, deps: SystemDependencies): Promise<System> {
  const runtimes = await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
  const renderers = createErrorRenderers(deps.clock);
  const handlers = { ...createHandlers({}), ...deps.handlers };
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
          handlers: handlers[runtime.name],
          renderError: renderers[runtime.name],
          ...(config.validateResponses ? { checkResponse: createResponseChecker(runtime.document) } : {}),
        })),
      });
      const server = createRoleServer({ app, renderError: renderers[fallbackInterface], bodyLimitBytes: config.bodyLimitBytes, logger: deps.logger });
      const address = await server.listen(config.ports[role], config.host);
      servers.push(server);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      roles.push({ role, app, port: address.port, url: `http://${host}:${address.port}` });
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.close()));
    throw error;
  }
  return {
    roles,
    url: (role) => roles.find((r) => r.role === role)!.url,
    stop: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}
