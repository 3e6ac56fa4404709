// A role's front: the public listener of a mocked role, in front of the Prism servers of its specs. It
// also answers the role map (`GET /.well-known/portolan`, kind "prism-mock") naming every role of its mock.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalFieldList, canonicalHeaderName } from '../src/lib/header-case.ts';
import type { InterfaceName } from '../src/lib/spec-catalog.ts';
import { createRouteTable, UNLIMITED_PARAM_LENGTH } from '../src/server/route-table.ts';
import { isRoleMapTarget, ROLE_MAP_HEADERS, roleMap, type RoleMapSource } from '../src/server/role-map.ts';
import type { MockRolePlan } from './prism-plan.ts';

export type MockFront = { server: Server; port: number; close(): Promise<void> };

type ListedRole = { role: string; port: number; docs: boolean; interfaces: readonly string[] };

/**
 * The fronts of one mock, for its role map: the fronts started over the same Prism servers (the same
 * `prismPorts` map, which startPrismMocks makes once per mock) are the roles of one mock. Each joins
 * once it listens and leaves when it closes.
 */
const mocks = new WeakMap<ReadonlyMap<InterfaceName, number>, Set<ListedRole>>();

function mockRoleMap(prismPorts: ReadonlyMap<InterfaceName, number>): RoleMapSource {
  return { kind: 'prism-mock', registrationHost: () => null, roles: () => [...(mocks.get(prismPorts) ?? [])] };
}

/**
 * One role's public listener: routes each request by method and path (the server's own route table)
 * to the Prism server of the spec that owns the operation, and streams the answer back unchanged.
 * Paths this role does not serve are answered here (404, or 405 with `Allow`) in Prism's problem
 * shape, because a spec's Prism would otherwise answer a path the spec serves on another role.
 */
export async function startMockFront(
  plan: MockRolePlan,
  prismPorts: ReadonlyMap<InterfaceName, number>,
  host: string,
  port: number,
): Promise<MockFront> {
  // Over-long path parameters go to Prism too, which answers them as the spec says (a 400), not the front.
  const routes = createRouteTable(plan.operations, { maxParamLength: UNLIMITED_PARAM_LENGTH });
  const source = mockRoleMap(prismPorts);
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    // The role map, before any route: no spec has the path, so Prism never sees it.
    if (isRoleMapTarget(url)) return answerRoleMap(req, res, source, plan.role);
    const match = routes.find(req.method ?? 'GET', path);
    if (match) return forward(req, res, prismPorts.get(match.operation.interfaceName)!);
    const allowed = routes.allowedMethods(path);
    if (allowed.length > 0) {
      return problem(
        res,
        405,
        `${PRISM_ERRORS}NO_METHOD_MATCHED_ERROR`,
        'Route resolved, but no method matched',
        `${req.method} is not served on ${path} by the ${plan.role} role; allowed: ${allowed.join(', ')}.`,
        { allow: allowed.join(', ') },
      );
    }
    problem(
      res,
      404,
      `${PRISM_ERRORS}NO_PATH_MATCHED_ERROR`,
      'Route not resolved, no path matched',
      `No operation of ${plan.interfaces.join(', ')} is served at ${path.slice(0, 200)} on the ${plan.role} role.`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const listed: ListedRole = { role: plan.role, port: (server.address() as AddressInfo).port, docs: false, interfaces: plan.interfaces };
  const siblings = mocks.get(prismPorts) ?? new Set<ListedRole>();
  mocks.set(prismPorts, siblings.add(listed));
  return {
    server,
    port: listed.port,
    close: () =>
      new Promise((resolve) => {
        siblings.delete(listed);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The mock's role map on GET and HEAD; any other method is a 405 in Prism's problem shape. */
function answerRoleMap(req: IncomingMessage, res: ServerResponse, source: RoleMapSource, role: string) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    req.resume();
    return problem(
      res,
      405,
      `${PRISM_ERRORS}NO_METHOD_MATCHED_ERROR`,
      'Route resolved, but no method matched',
      `${req.method} is not served on /.well-known/portolan by the ${role} role; allowed: GET, HEAD.`,
      { allow: 'GET, HEAD' },
    );
  }
  req.resume();
  const body = JSON.stringify(roleMap(source, req.socket.localAddress));
  const headers = {
    ...ROLE_MAP_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
  };
  res.writeHead(200, canonicalFields(headers));
  res.end(req.method === 'HEAD' ? undefined : body);
}

function forward(req: IncomingMessage, res: ServerResponse, port: number) {
  const upstream = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    // Prism writes some names in its own case (`Content-type`, lower-case ones of its server): the front
    // writes every name as clients expect it, as the reference does.
    res.writeHead(answer.statusCode ?? 502, canonicalFieldList(answer.rawHeaders));
    answer.pipe(res);
  });
  upstream.on('error', (error) => {
    if (res.headersSent) return res.destroy();
    problem(
      res,
      502,
      'about:blank',
      'The Prism mock did not answer',
      `Prism on port ${port}: ${(error as NodeJS.ErrnoException).code ?? error.message}.`,
    );
  });
  req.pipe(upstream);
}

/** The type URIs Prism gives its own errors; the front's 404 and 405 use them so clients see one shape. */
const PRISM_ERRORS = 'https://stoplight.io/prism/errors#';

function problem(res: ServerResponse, status: number, type: string, title: string, detail: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify({ type, title, status, detail });
  res.writeHead(
    status,
    canonicalFields({ 'content-type': 'application/problem+json', 'content-length': String(Buffer.byteLength(body)), ...headers }),
  );
  res.end(body);
}

/** Header fields by name as a field list with every name in its conventional case (`Content-Type`, `Allow`). */
const canonicalFields = (headers: Record<string, string>): string[] =>
  Object.entries(headers).flatMap(([name, value]) => [canonicalHeaderName(name), value]);
