// The role map: `GET /.well-known/portolan` (and HEAD) on every role of the reference system and of
// `portolan mock`, a JSON document naming every role of the running system, where it listens, its
// reference page and its interfaces, so a tool given one URL finds the rest:
//   {"service":"portolan","version":"0.1.0","kind":"reference","registrationHost":"localhost:8080",
//    "roles":[{"role":"gateway","url":"http://127.0.0.1:8080","docs":"http://127.0.0.1:8080/docs",
//              "interfaces":["client-registration","rate-limit","health","access-session"]}, ...]}
// Each URL's host is the local address the request arrived on (never its Host header, which a client
// chooses); IPv6 in brackets. Like /metrics and /docs it is about the role, outside every interface's
// contract: not counted in the request metrics, logged at debug. It carries no credential.
import { packageVersion } from '../lib/version.ts';
import { portolanError } from '../lib/errors.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import type { ErrorRenderer } from './role-app.ts';
import type { Stage, StageResponse } from './stages.ts';

/** Where the role map is answered on every role. */
export const ROLE_MAP_PATH = '/.well-known/portolan';

/** The version of the installed Portolan package (the role map names it), read at the first answer, not at import. */
let version: string | undefined;
const portolanVersion = (): string => (version ??= packageVersion());

export type RoleMapKind = 'reference' | 'prism-mock';

/** One role as the map lists it. */
export type RoleMapRole = { role: string; url: string; docs: string | null; interfaces: string[] };

/** The role map document. */
export type RoleMap = {
  service: 'portolan';
  version: string;
  kind: RoleMapKind;
  registrationHost: string | null;
  roles: RoleMapRole[];
};

/** What a running system tells the map, read per request (ports chosen at listen time are known by then). */
export type RoleMapSource = {
  kind: RoleMapKind;
  /** The Host header registration requests are recognised by; null when nothing routes by Host here. */
  registrationHost(): string | null;
  /** The roles listening now: port, whether they serve /docs, and the interfaces they serve. */
  roles(): readonly { role: string; port: number; docs: boolean; interfaces: readonly string[] }[];
};

/**
 * The host part of a URL for a connection's local address: IPv6 in brackets (a zone escaped), an
 * IPv4-mapped IPv6 address as its IPv4 form; 127.0.0.1 when unknown (a request made in-process).
 *
 * @example
 * localAddressHost('::1') // '[::1]'
 * localAddressHost('::ffff:127.0.0.1') // '127.0.0.1'
 */
export function localAddressHost(localAddress: string | undefined): string {
  if (!localAddress) return '127.0.0.1';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(localAddress);
  if (mapped) return mapped[1]!;
  return localAddress.includes(':') ? `[${localAddress.replace('%', '%25')}]` : localAddress;
}

/**
 * The role map as seen from a connection that arrived on `localAddress`: every role in the order of
 * src/lib/roles.ts, at that address and its own port.
 *
 * @example
 * roleMap(source, '127.0.0.1').roles[0] // { role: 'gateway', url: 'http://127.0.0.1:8080', docs: 'http://127.0.0.1:8080/docs', interfaces: [...] }
 */
export function roleMap(source: RoleMapSource, localAddress: string | undefined): RoleMap {
  const host = localAddressHost(localAddress);
  const order = (role: string) => {
    const index = ROLE_NAMES.indexOf(role as (typeof ROLE_NAMES)[number]);
    return index === -1 ? ROLE_NAMES.length : index;
  };
  const roles = [...source.roles()]
    .sort((a, b) => order(a.role) - order(b.role))
    .map(({ role, port, docs, interfaces }) => {
      const url = `http://${host}:${port}`;
      return { role, url, docs: docs ? `${url}/docs` : null, interfaces: [...interfaces] };
    });
  return { service: 'portolan', version: portolanVersion(), kind: source.kind, registrationHost: source.registrationHost(), roles };
}

/** Whether a request target is the role map's (its query, if any, is ignored). */
export function isRoleMapTarget(url: string): boolean {
  // Run on every request of every role: a prefix test, no slice of the target.
  return url.startsWith(ROLE_MAP_PATH) && (url.length === ROLE_MAP_PATH.length || url.charCodeAt(ROLE_MAP_PATH.length) === 0x3f);
}

/** The headers of every role-map answer: JSON, never cached (it says what runs now), readable by any page. */
export const ROLE_MAP_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'access-control-allow-origin': '*',
  'x-content-type-options': 'nosniff',
};

/**
 * The role map as a stage, run before the role's own (before the gateway's pool, so the pool never
 * sees it): GET and HEAD get the map, any other method the role's 405 with `Allow: GET, HEAD`;
 * every other request passes on synchronously.
 *
 * @example
 * const stages = [roleMapStage(source, app.renderError), (request) => app.handle(request)];
 */
export function roleMapStage(source: RoleMapSource, renderError: ErrorRenderer): Stage {
  const log = { page: ROLE_MAP_PATH };
  return (request): StageResponse | undefined => {
    if (!isRoleMapTarget(request.url)) return undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refused = renderError(
        portolanError('methodNotAllowed', `${request.method.slice(0, 20)} is not allowed on this path; allowed: GET, HEAD.`),
        request,
      );
      return { ...refused, headers: { ...refused.headers, allow: 'GET, HEAD' }, aside: 'debug', log };
    }
    return {
      status: 200,
      headers: ROLE_MAP_HEADERS,
      contentType: 'application/json; charset=utf-8',
      body: Buffer.from(JSON.stringify(roleMap(source, request.localAddress))),
      aside: 'debug',
      log,
    };
  };
}
