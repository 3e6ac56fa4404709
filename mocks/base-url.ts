import { ROLE_DEFINITIONS, type RoleName } from '../src/lib/roles.ts';

/** Where a role is reached by default: the spec's own server URL (`http://localhost:<role port>`). */
export const defaultBaseUrl = (role: RoleName) => `http://localhost:${ROLE_DEFINITIONS[role].defaultPort}`;

/**
 * The path of a request below a base URL (which may carry a path prefix), with its query string;
 * undefined when the request goes elsewhere.
 *
 * @example
 * pathBelow('http://localhost:8081', 'http://localhost:8081/api/charts?x=1') // { path: '/api/charts', search: '?x=1' }
 */
export function pathBelow(baseUrl: string, requestUrl: string): { path: string; search: string } | undefined {
  const base = new URL(baseUrl);
  const url = new URL(requestUrl);
  if (url.origin !== base.origin) return undefined;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (prefix !== '' && url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return undefined;
  return { path: url.pathname.slice(prefix.length) || '/', search: url.search };
}

/** A base URL per role: one string for every role, or a map with the defaults for the rest. */
export function baseUrlFor(option: string | Partial<Record<RoleName, string>> | undefined, role: RoleName): string {
  if (typeof option === 'string') return option;
  return option?.[role] ?? defaultBaseUrl(role);
}
