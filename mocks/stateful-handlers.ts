import { randomBytes } from 'node:crypto';
import { http, passthrough, type HttpHandler } from 'msw';
import { pino } from 'pino';
import hyperid from 'hyperid';
import { loadConfig, type Config } from '../src/app/config.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { createRouteTable, UNLIMITED_PARAM_LENGTH } from '../src/server/route-table.ts';
import { startSystem, type System } from '../src/app/system.ts';
import { baseUrlFor, pathBelow } from './base-url.ts';
import { toFetchResponse, toStagedRequest } from './fetch-translation.ts';
import { runStages } from '../src/server/stages.ts';
import { operationsOnRole } from './gateway-pool.ts';

export type StatefulHandlerOptions = {
  /** The specs whose operations are answered (default: all eight). */
  interfaces?: readonly InterfaceName[];
  /** Where each role is reached (default: the specs' server URLs, `http://localhost:<role port>`). */
  baseUrls?: Partial<Record<RoleName, string>>;
  /**
   * Settings of the reference system (environment variables and PORTOLAN_CONFIG are not read).
   * Defaults: a private in-memory SQLite store, free loopback ports, every response checked against
   * its spec (a violation becomes a 500 naming it), logs off, a random admin password.
   */
  config?: Partial<Config>;
  /** The reference's clock (default: the system clock); pass a fake one to move time in tests. */
  clock?: Clock;
};

export type StatefulMocks = {
  /**
   * One MSW handler per role, answering the chosen specs' operations below that role's base URL, after
   * one that lets the reference system's own loopback traffic through.
   */
  handlers: HttpHandler[];
  /** The administrative account of the device, central, diagnostics and gateway operations. */
  admin: { user: string; password: string };
  /** The running reference system behind the handlers (its store, its listeners' URLs). */
  system: System;
  /** Stops the reference system and frees its store. */
  close(): Promise<void>;
};

/**
 * MSW handlers backed by the reference implementation itself, in-process: every request goes through
 * the same stages as on `npm start`'s listeners (the gateway's rate limiting, registration and pool
 * included; the pool's members are the system's own listeners), on a private store.
 *
 * @example
 * const mocks = await createStatefulHandlers({ interfaces: ['mapping'] });
 * const server = setupServer(...mocks.handlers);
 * server.listen({ onUnhandledFrame: 'error' });
 * // ... your tests against http://localhost:8081 ...
 * server.close();
 * await mocks.close();
 */
export async function createStatefulHandlers(options: StatefulHandlerOptions = {}): Promise<StatefulMocks> {
  const adminPassword = options.config?.adminPassword || randomBytes(18).toString('base64url');
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      ports: Object.fromEntries(ROLE_NAMES.map((role) => [role, 0])) as Record<RoleName, number>,
      database: 'sqlite::memory:',
      logLevel: 'silent',
      validateResponses: true,
      ...options.config,
      adminPassword,
    },
  );
  const clock = options.clock ?? systemClock;
  const system = await startSystem(config, { logger: pino({ level: config.logLevel }), clock });
  const nextId = hyperid({ urlSafe: true });
  const chosen = new Set<InterfaceName>(options.interfaces ?? INTERFACES.map((i) => i.name));

  // Every role app lists the shared operations (GET /health) as the same objects; count each once.
  const operations = [...new Set(system.roles.flatMap((r) => r.app.operations))].filter((op) =>
    chosen.has(op.interfaceName as InterfaceName),
  );

  const handlers = system.roles.flatMap(({ role, stages }) => {
    const { own, viaPool } = operationsOnRole(operations, role);
    if (own.length === 0) return [];
    // Over-long path parameters are handed to the role app too, which answers them as the server does.
    const routes = createRouteTable([...own, ...viaPool], { maxParamLength: UNLIMITED_PARAM_LENGTH });
    const baseUrl = baseUrlFor(options.baseUrls, role);
    return [
      http.all(
        ({ request }) => {
          const below = pathBelow(baseUrl, request.url);
          return !!below && !!routes.find(request.method, below.path);
        },
        async ({ request }) => {
          const below = pathBelow(baseUrl, request.url)!;
          const requestId = nextId();
          return toFetchResponse(await runStages(stages, await toStagedRequest(request, below, requestId)), requestId);
        },
      ),
    ];
  });

  return {
    handlers: [
      systemTraffic(
        system,
        ROLE_NAMES.map((role) => baseUrlFor(options.baseUrls, role)),
      ),
      ...handlers,
    ],
    admin: { user: config.adminUser, password: adminPassword },
    system,
    async close() {
      await system.stop({ timeoutMs: 1000 });
    },
  };
}

/**
 * Lets the reference system's own loopback calls through (the gateway's pool and health monitor, and
 * the registration's calls to the device role): with `onUnhandledFrame: 'error'` MSW would refuse them.
 * MSW intercepts at the socket and names a request by its Host header and the port it connects to, so
 * a passed-on gateway request shows the gateway's base URL host with a listener's port: those hosts
 * are let through on the listeners' ports too.
 */
function systemTraffic(system: System, baseUrls: readonly string[]): HttpHandler {
  const ports = new Set(system.roles.map((r) => String(r.port)));
  const hosts = new Set(['localhost', '127.0.0.1', '[::1]', ...baseUrls.map((u) => new URL(u).hostname)]);
  return http.all(
    ({ request }) => {
      const url = new URL(request.url);
      return hosts.has(url.hostname) && ports.has(url.port);
    },
    () => passthrough(),
  );
}
