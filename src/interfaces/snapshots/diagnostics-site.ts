/** A Host header that is a host name or bracketed IP address with an optional port; group 1 is the name. */
export const HOST = /^([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Where the login server and the diagnostics API are reached, from configuration only: the allow-list
 * that the login's redirect and cross-site check, and the diagnostics API's own links (the upload's
 * Location, a record's links), are decided by. A request's Host is never trusted for more than picking
 * one of these names.
 */
export type DiagnosticsSite = {
  /** Names the roles answer under directly, lower case: loopback, the listening address (a wildcard: the interfaces' addresses), this machine's name. */
  readonly listenerNames: readonly string[];
  /** The login and diagnostics roles' ports as they listen (read per request: a port of 0 becomes the one it got). */
  listenerPorts(): readonly number[];
  /** PORTOLAN_DIAGNOSTICS_COOKIE_DOMAIN: this name and its subdomains share the session, at any port (empty: none). */
  readonly cookieDomain: string;
  /** PORTOLAN_DIAGNOSTICS_SECURE_COOKIES: TLS is terminated in front, so browsers see https on public names. */
  readonly secure: boolean;
  /** PORTOLAN_DIAGNOSTICS_PUBLIC_URL without a trailing slash (empty: none). */
  readonly publicUrl: string;
};

export type Authority = { name: string; port: number | undefined };

const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '[::]']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** An address as a Host header writes it: IPv6 in brackets. */
const asHostName = (address: string) => (address.includes(':') && !address.startsWith('[') ? `[${address}]` : address);

/**
 * The names a DiagnosticsSite lists for a listening address and a machine name: loopback always, the
 * address itself, the machine's own name. A wildcard address (every interface) is no name a browser
 * visits: it lists instead the addresses of the machine's interfaces (`interfaceAddresses`, read from the
 * OS by the caller) that it accepts connections on: IPv4 ones for 0.0.0.0, all for `::` (dual stack).
 * A client at one of them (10.0.0.5:8301) is then redirected and linked to that address, where its
 * host-only cookie goes. A DNS name other than the machine's is listed only by a cookie domain or a public URL.
 *
 * @example
 * listenerNamesFor('10.0.0.5', 'diag-box') // ['localhost', '127.0.0.1', '[::1]', '10.0.0.5', 'diag-box']
 * listenerNamesFor('0.0.0.0', 'diag-box', ['127.0.0.1', '10.0.0.5', 'fd00::5']) // ['localhost', '127.0.0.1', '[::1]', '10.0.0.5', 'diag-box']
 * listenerNamesFor('::', 'diag-box', ['10.0.0.5', 'fd00::5']) // [..., '10.0.0.5', '[fd00::5]', 'diag-box']
 */
export function listenerNamesFor(listenAddress: string, machineName: string, interfaceAddresses: readonly string[] = []): string[] {
  const address = asHostName(listenAddress);
  const ipv4Only = address === '0.0.0.0';
  const own = WILDCARD_ADDRESSES.has(address) ? interfaceAddresses.filter((a) => !ipv4Only || !a.includes(':')).map(asHostName) : [address];
  const names = [...LOOPBACK_NAMES, ...own, machineName];
  return [...new Set(names.filter((n) => n !== '').map((n) => n.toLowerCase()))];
}

/** A Host header's name (lower case) and port; undefined unless it is a plain host name or bracketed IP, with an optional port. */
export function authorityOf(host: string | undefined): Authority | undefined {
  const match = host === undefined ? null : HOST.exec(host);
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  const port = host!.length > match[1]!.length ? Number(host!.slice(match[1]!.length + 1)) : undefined;
  return port !== undefined && port > 65_535 ? undefined : { name, port };
}

function underCookieDomain(site: DiagnosticsSite, name: string): boolean {
  const domain = site.cookieDomain.toLowerCase();
  return domain !== '' && (name === domain || name.endsWith(`.${domain}`));
}

/**
 * The Host of a request (to the login or the diagnostics role) when it is one the site lists: a listener name at a listener port, or a
 * name under the cookie domain at any port (a proxy in front may use any). Anything else: undefined.
 */
export function listedHost(site: DiagnosticsSite, host: string | undefined): Authority | undefined {
  const authority = authorityOf(host);
  if (authority === undefined) return undefined;
  if (underCookieDomain(site, authority.name)) return authority;
  const atListener =
    authority.port !== undefined && site.listenerNames.includes(authority.name) && site.listenerPorts().includes(authority.port);
  return atListener ? authority : undefined;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/**
 * Is this origin one of the service's own? The login role's own origin (the request's Host, http, or
 * https behind TLS), an http origin of a listener name at a listener port (the login and diagnostics
 * roles themselves), a name under the cookie domain (the operator's declaration that those hosts share
 * the session), the public URL's origin. Not `null`, not another port, scheme or look-alike name.
 */
export function isSiteOrigin(site: DiagnosticsSite, origin: URL, requestHost: string | undefined): boolean {
  const port = DEFAULT_PORTS[origin.protocol];
  if (port === undefined || origin.username !== '' || origin.password !== '') return false;
  if (site.publicUrl !== '' && new URL(site.publicUrl).origin === origin.origin) return true;
  const name = origin.hostname.toLowerCase();
  const originPort = origin.port === '' ? port : Number(origin.port);
  const publicScheme = site.secure ? 'https:' : 'http:';
  const own = authorityOf(requestHost);
  if (
    own !== undefined &&
    origin.protocol === publicScheme &&
    own.name === name &&
    (own.port ?? DEFAULT_PORTS[publicScheme]) === originPort
  )
    return true;
  if (origin.protocol === publicScheme && underCookieDomain(site, name)) return true;
  return origin.protocol === 'http:' && site.listenerNames.includes(name) && site.listenerPorts().includes(originPort);
}

/** The settings a DiagnosticsSite is built from. */
export type DiagnosticsSiteConfig = {
  readonly host: string;
  readonly ports: Readonly<Record<'login' | 'diagnostics', number>>;
  readonly diagnosticsCookieDomain: string;
  readonly diagnosticsSecureCookies: boolean;
  readonly diagnosticsPublicUrl: string;
};

/**
 * The DiagnosticsSite of a configuration. `roleUrl` gives a role's URL once it listens in this process (its
 * real port when configured as 0); a role in another process is at its configured port. `machineName` and
 * `interfaceAddresses` are the OS's (module.ts reads them): this stays a pure function of its arguments.
 */
export function diagnosticsSiteOf(
  config: DiagnosticsSiteConfig,
  roleUrl: (role: 'login' | 'diagnostics') => string | undefined,
  machineName: string,
  interfaceAddresses: readonly string[] = [],
): DiagnosticsSite {
  const portOf = (role: 'login' | 'diagnostics') => {
    const url = roleUrl(role);
    return url === undefined ? config.ports[role] : Number(new URL(url).port || 80);
  };
  return {
    listenerNames: listenerNamesFor(config.host, machineName, interfaceAddresses),
    listenerPorts: () => [portOf('login'), portOf('diagnostics')].filter((port) => port > 0),
    cookieDomain: config.diagnosticsCookieDomain,
    secure: config.diagnosticsSecureCookies,
    publicUrl: config.diagnosticsPublicUrl.replace(/\/+$/, ''),
  };
}
