// Where the roles of a Portolan system are, for its clients (`portolan snapshot`, conformance): from the same
// settings `portolan start` reads (PORTOLAN_HOST, PORTOLAN_PORT_OFFSET, PORTOLAN_<ROLE>_PORT, the
// PORTOLAN_CONFIG file), or from the role map a running system publishes at GET /.well-known/portolan.
import { CORE_SETTINGS, decodeSettings, type CoreConfig, type Setting } from './config.ts';
import type { Result } from './errors.ts';
import { ROLE_NAMES, type RoleName } from './roles.ts';

/** Each role's URL (`http://127.0.0.1:8080`); undefined for a role whose port setting is 0 (known only once started). */
export type RoleUrls = Readonly<Record<RoleName, string | undefined>>;

/** The settings that place the roles: the address, the offset and each role's port. */
const PLACEMENT: readonly Setting[] = CORE_SETTINGS.filter(
  (setting) => setting.key === 'host' || setting.key === 'portOffset' || setting.key.startsWith('ports.'),
);

/**
 * The host part of a URL to reach an address a role listens on: the wildcard addresses become loopback
 * (0.0.0.0 → 127.0.0.1, :: → [::1]) and IPv6 addresses go in brackets.
 *
 * @example urlHost('::') // '[::1]'
 * @example urlHost('fe80::1') // '[fe80::1]'
 * @example urlHost('localhost') // 'localhost'
 */
export function urlHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === '' || bare === '0.0.0.0') return '127.0.0.1';
  if (bare === '::' || bare === '::0') return '[::1]';
  return bare.includes(':') ? `[${bare}]` : bare;
}

/**
 * The URL of every role from the settings `portolan start` reads: defaults, the PORTOLAN_CONFIG file, then
 * the environment (PORTOLAN_HOST, PORTOLAN_PORT_OFFSET, PORTOLAN_<ROLE>_PORT), through the same decoder.
 * Throws the start's ConfigError (each problem one line in `problems`) when one of these settings is wrong.
 *
 * @example
 * roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '10000', PORTOLAN_HOST: '0.0.0.0' }).diagnostics // 'http://127.0.0.1:18300'
 */
export function roleUrlsFromSettings(env: Record<string, string | undefined> = process.env): RoleUrls {
  const { host, ports } = decodeSettings<CoreConfig>(PLACEMENT, env, {}, { partial: true });
  const where = urlHost(host);
  return Object.freeze(
    Object.fromEntries(ROLE_NAMES.map((role) => [role, ports[role] === 0 ? undefined : `http://${where}:${ports[role]}`])),
  ) as RoleUrls;
}

/** The path of the role map every role of a Portolan system (reference or mock) answers. */
export const ROLE_MAP_PATH = '/.well-known/portolan';

/** What a role map says: which system answered, and where each of its roles is. */
export type DiscoveredRoles = {
  kind: string;
  version: string;
  /** The roles the map lists, in its order. */
  urls: Readonly<Partial<Record<RoleName, string>>>;
};

type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A URL as it may be printed: origin and path, never a user, password or query. */
const shown = (url: URL) => `${url.origin}${url.pathname === '/' ? '' : url.pathname}`;

/**
 * Reads the role map of the system one of whose roles answers at `url` (any role: the map is at the
 * origin's /.well-known/portolan) and answers each role's URL, or one line saying what went wrong. Each
 * role is on `url`'s host: only its scheme and port come from the map.
 *
 * @example
 * const found = await discoverRoles('http://127.0.0.1:8080', fetch);
 * if (found.ok) console.log(found.value.urls.diagnostics); // 'http://127.0.0.1:8300'
 */
export async function discoverRoles(
  url: string,
  fetcher: FetchLike = fetch,
  options: { timeoutMs?: number } = {},
): Promise<Result<DiscoveredRoles, string>> {
  const base = URL.canParse(url) ? new URL(url) : undefined;
  if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:'))
    return { ok: false, error: `'${url.slice(0, 80)}' is not an http or https URL` };
  if (base.username || base.password) return { ok: false, error: `${shown(base)}: a role's URL must not hold a user or password` };
  const mapUrl = new URL(ROLE_MAP_PATH, base.origin);
  let response: Response;
  try {
    response = await fetcher(mapUrl.href, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    return { ok: false, error: `cannot reach ${base.origin} (${causeCode(error)}): is a Portolan role listening there?` };
  }
  const notMap = (why: string) => ({
    ok: false as const,
    error: `${base.origin} gives no Portolan role map (GET ${ROLE_MAP_PATH} ${why}): is it a role of Portolan (portolan start or portolan mock)?`,
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    return notMap(`answered ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return notMap('answered something other than JSON');
  }
  const map = body as { service?: unknown; kind?: unknown; version?: unknown; roles?: unknown };
  if (typeof map !== 'object' || map === null || map.service !== 'portolan' || !Array.isArray(map.roles))
    return notMap('answered JSON without "service": "portolan" and its "roles"');
  const urls: Partial<Record<RoleName, string>> = {};
  for (const entry of map.roles as unknown[]) {
    const { role, url: roleUrl } = (entry ?? {}) as { role?: unknown; url?: unknown };
    if (typeof role !== 'string' || !ROLE_NAMES.includes(role as RoleName)) continue;
    if (typeof roleUrl !== 'string' || !URL.canParse(roleUrl) || !/^https?:$/.test(new URL(roleUrl).protocol))
      return notMap(`lists the ${role} role without an http URL`);
    // Only the scheme and port come from the map; the host is the one the user named: a map cannot send
    // the login (and its password) to another host.
    const pinned = new URL(roleUrl);
    pinned.hostname = base.hostname;
    pinned.username = '';
    pinned.password = '';
    pinned.search = '';
    pinned.hash = '';
    urls[role as RoleName] = pinned.href.replace(/\/+$/, '');
  }
  return {
    ok: true,
    value: { kind: typeof map.kind === 'string' ? map.kind : 'unknown', version: typeof map.version === 'string' ? map.version : '', urls },
  };
}

/** The code of a failed fetch (ECONNREFUSED, a timeout), else its first line. */
function causeCode(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'no answer in time';
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return error instanceof Error ? error.message.split('\n')[0]!.slice(0, 80) : 'failed';
}
