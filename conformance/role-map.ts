// The role map a Portolan system publishes on every role, `GET /.well-known/portolan`: which roles it runs,
// where, and what kind of system it is (the reference system, or the Prism mocks of `portolan mock`). From
// one URL of any role, conformance finds every other role and sends each operation to the role that serves it.
import { request } from 'undici';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { withoutCredentials } from './targets.ts';

/** Where every role of a Portolan system publishes its role map. */
export const ROLE_MAP_PATH = '/.well-known/portolan';

export type RoleMapRole = { role: RoleName; url: string; docs: string | null; interfaces: string[] };

/** The role map as conformance uses it (unknown roles and fields left out). */
export type RoleMap = {
  version: string;
  /** `reference` (the reference system, it keeps state) or `prism-mock` (Prism mocks: stateless). */
  kind: 'reference' | 'prism-mock' | string;
  registrationHost: string | null;
  roles: RoleMapRole[];
  /** The address it was read from (without a user and password). */
  source: string;
};

/**
 * Reads the role map of the system `baseUrl` belongs to: undefined when there is none (any answer but a
 * 200 with a Portolan role map, or no answer within `timeoutMs`: the caller then probes the URL as it is).
 *
 * @example
 * const map = await fetchRoleMap('http://127.0.0.1:8081', { timeoutMs: 10_000 });
 * // map?.roles.map((r) => r.role): ['gateway', 'mapping', 'device', 'central', 'diagnostics', 'login']
 */
export async function fetchRoleMap(baseUrl: string, options: { timeoutMs: number }): Promise<RoleMap | undefined> {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${ROLE_MAP_PATH}`);
  // No credentials: the role map needs none, and a URL that carries some is refused by some clients.
  url.username = '';
  url.password = '';
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return undefined;
    return parseRoleMap(JSON.parse(text), withoutCredentials(url.href));
  } catch {
    return undefined;
  }
}

/**
 * A role map from its JSON, or undefined when it is not one (`service` is not `portolan`, no known role
 * with a URL). Roles this version does not know are left out.
 *
 * @example parseRoleMap({ service: 'portolan', version: '0.1.0', kind: 'reference', registrationHost: null, roles: [...] }, 'http://h/.well-known/portolan')
 */
export function parseRoleMap(json: unknown, source: string): RoleMap | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const map = json as Record<string, unknown>;
  if (map.service !== 'portolan' || !Array.isArray(map.roles)) return undefined;
  const roles: RoleMapRole[] = [];
  for (const entry of map.roles as Record<string, unknown>[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { role, url } = entry;
    if (typeof role !== 'string' || !(ROLE_NAMES as string[]).includes(role)) continue;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url) || !URL.canParse(url)) continue;
    roles.push({
      role: role as RoleName,
      url: onHostOf(url, source),
      docs: typeof entry.docs === 'string' ? entry.docs : null,
      interfaces: Array.isArray(entry.interfaces) ? entry.interfaces.filter((i): i is string => typeof i === 'string') : [],
    });
  }
  if (roles.length === 0) return undefined;
  return {
    version: typeof map.version === 'string' ? map.version : 'unknown',
    kind: typeof map.kind === 'string' ? map.kind : 'unknown',
    registrationHost: typeof map.registrationHost === 'string' && map.registrationHost !== '' ? map.registrationHost : null,
    roles,
    source,
  };
}

/**
 * A role's URL from the map, on the host the map was read from: only its scheme and port are taken. A map
 * cannot send the run (and the credentials it carries) to another host, and a system behind an address
 * translation (a published port, 0.0.0.0) is reached where the user reached it.
 *
 * @example onHostOf('http://10.0.0.5:8300/', 'http://127.0.0.1:8080/.well-known/portolan') // 'http://127.0.0.1:8300'
 */
export function onHostOf(roleUrl: string, source: string): string {
  const url = new URL(roleUrl);
  url.hostname = new URL(source).hostname;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.href.replace(/\/+$/, '');
}

/** Each role of the map with its URL: a target map (targets.ts) that sends every operation to its role. */
export function roleMapTargets(map: RoleMap): Record<string, string> {
  return Object.fromEntries(map.roles.map((r) => [r.role, r.url]));
}

/**
 * The role map in words, for the reports (the URLs are in the targets line):
 * `from the role map of <source> (the reference system 0.1.0: gateway, mapping, ...)`.
 */
export function describeRoleMap(map: RoleMap): string {
  const kind = map.kind === 'prism-mock' ? 'the Prism mocks' : map.kind === 'reference' ? 'the reference system' : `a ${map.kind} system`;
  return `from the role map of ${map.source} (${kind} ${map.version}: ${map.roles.map((r) => r.role).join(', ')})`;
}
