import { randomBytes } from 'node:crypto';
import { http, passthrough, type HttpHandler } from 'msw';
import { pino } from 'pino';
import { Pool } from 'undici';
import hyperid from 'hyperid';
import { loadConfig, type Config } from '../src/lib/config.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import { portolanError } from '../src/lib/errors.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { createErrorRenderers } from '../src/interfaces/error-shapes.ts';
import { createRouteTable, UNLIMITED_PARAM_LENGTH } from '../src/server/route-table.ts';
import { startSystem, type System } from '../src/server/system.ts';
import { baseUrlFor, pathBelow } from './base-url.ts';
import { toFetchResponse, toIncomingRequest } from './fetch-translation.ts';
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
 * MSW handlers backed by the reference implementation itself, in-process: every request is routed,
 * validated and answered by the same role apps and handlers as `npm start`, on a private store.
 * The gateway is the one exception that goes through a socket: its behaviour lives in its listener
 * (rate limiting, registration, passing the rest to the mapping pool), so its requests are sent to
 * the system's own gateway listener on a loopback port.
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
  const config = loadConfig({}, {
    host: '127.0.0.1',
    ports: Object.fromEntries(ROLE_NAMES.map((role) => [role, 0])) as Record<RoleName, number>,
    database: 'sqlite::memory:',
    logLevel: 'silent',
    validateResponses: true,
    ...options.config,
    adminPassword,
  });
  const clock = options.clock ?? systemClock;
  const system = await startSystem(config, { logger: pino({ level: config.logLevel }), clock });
  const renderers = createErrorRenderers(clock);
  const nextId = hyperid({ urlSafe: true });
  const chosen = new Set<InterfaceName>(options.interfaces ?? INTERFACES.map((i) => i.name));
  const gateway = system.roles.some((r) => r.role === 'gateway') ? new Pool(system.url('gateway')) : undefined;

  // Every role app lists the shared operations (GET /health) as the same objects; count each once.
  const operations = [...new Set(system.roles.flatMap((r) => r.app.operations))].filter((op) => chosen.has(op.interfaceName));

  const handlers = system.roles.flatMap(({ role, app }) => {
    const { own, viaPool } = operationsOnRole(operations, role);
    if (own.length === 0) return [];
    // Over-long path parameters are handed to the role app too, which answers them as the server does.
    const routes = createRouteTable([...own, ...viaPool], { maxParamLength: UNLIMITED_PARAM_LENGTH });
    const baseUrl = baseUrlFor(options.baseUrls, role);
    const fallback = renderers[ROLE_DEFINITIONS[role].fallbackInterface];
    return [
      http.all(
        ({ request }) => {
          const below = pathBelow(baseUrl, request.url);
          return !!below && !!routes.find(request.method, below.path);
        },
        async ({ request }) => {
          const below = pathBelow(baseUrl, request.url)!;
          if (role === 'gateway' && gateway) return forward(gateway, request, below);
          const requestId = nextId();
          const incoming = await toIncomingRequest(request, below, requestId);
          if ((incoming.rawBody?.length ?? 0) > config.bodyLimitBytes) {
            const tooLarge = fallback(portolanError('payloadTooLarge', `The request body exceeds ${config.bodyLimitBytes} bytes.`), incoming);
            return toFetchResponse(tooLarge, requestId);
          }
          return toFetchResponse(await app.handle(incoming), requestId);
        },
      ),
    ];
  });

  return {
    handlers: [systemTraffic(system, ROLE_NAMES.map((role) => baseUrlFor(options.baseUrls, role))), ...handlers],
    admin: { user: config.adminUser, password: adminPassword },
    system,
    async close() {
      await gateway?.close();
      await system.stop({ timeoutMs: 1000 });
    },
  };
}

/**
 * Lets the reference system's own loopback calls through (the gateway's pool and health monitor, the
 * registration's calls to the device role, and `forward` below): with `onUnhandledFrame: 'error'`
 * MSW would refuse them. MSW intercepts at the socket and names a request by its Host header and
 * the port it connects to, so a forwarded gateway request shows the gateway's base URL host with a
 * listener's port: those hosts are let through on the listeners' ports too.
 */
function systemTraffic(system: System, baseUrls: readonly string[]): HttpHandler {
  const ports = new Set(system.roles.map((r) => String(r.port)));
  const hosts = new Set(['localhost', '127.0.0.1', '[::1]', ...baseUrls.map((u) => new URL(u).hostname)]);
  return http.all(({ request }) => {
    const url = new URL(request.url);
    return hosts.has(url.hostname) && ports.has(url.port);
  }, () => passthrough());
}

/**
 * Sends a request to the gateway listener as it came (method, path, headers including Host, body).
 * MSW sees this request too, under the Host header's name and the listener's port: systemTraffic lets
 * it through, so it does not loop back into these handlers.
 */
async function forward(pool: Pool, request: Request, below: { path: string; search: string }): Promise<Response> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const answer = await pool.request({
    method: request.method as 'GET',
    path: `${below.path}${below.search}`,
    headers: { ...Object.fromEntries(request.headers), host: new URL(request.url).host },
    ...(body && body.length > 0 ? { body } : {}),
  });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    // The body is handed over whole, so the wire's framing headers no longer apply.
    if (value === undefined || name === 'transfer-encoding' || name === 'content-length') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const empty = answer.statusCode === 204 || answer.statusCode === 304;
  return new Response(empty ? null : bytes, { status: answer.statusCode, headers });
}
