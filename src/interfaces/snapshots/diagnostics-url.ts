import { listedHost, type DiagnosticsSite } from './diagnostics-site.ts';

/**
 * The diagnostics API's base URL the login's 302 points to; never anything the request chose:
 * - PORTOLAN_DIAGNOSTICS_PUBLIC_URL when set (a proxy in front), whatever the Host;
 * - else, when the login's Host is one the site lists, that name at the diagnostics role's port: the
 *   session cookie is host-only (no Domain), so after a login at `localhost` a redirect to the listening
 *   address (127.0.0.1) would arrive without it (`curl -L` would get 403); a name under the cookie domain
 *   over https when PORTOLAN_DIAGNOSTICS_SECURE_COOKIES is set;
 * - else the diagnostics role's listening URL. X-Forwarded-Host and query parameters are never read.
 *
 * @example
 * diagnosticsUrlFor(site, 'localhost:8301', 'http://127.0.0.1:8300') // 'http://localhost:8300'
 * diagnosticsUrlFor(site, 'evil.example', 'http://127.0.0.1:8300') // 'http://127.0.0.1:8300'
 */
export function diagnosticsUrlFor(site: DiagnosticsSite, loginHost: string | undefined, listening: string): string {
  if (site.publicUrl !== '') return site.publicUrl;
  const listed = listedHost(site, loginHost);
  if (listed === undefined) return listening;
  const url = new URL(listening);
  return `${schemeFor(site, listed.name, url)}//${listed.name}${url.port ? `:${url.port}` : ''}`;
}

/**
 * The base URL of the diagnostics API's own links (the upload's 302 Location, a snapshot record's `files`,
 * `commands`, `gui_uri` and `diagnostics`), by the same allow-list as the login's redirect:
 * - PORTOLAN_DIAGNOSTICS_PUBLIC_URL when set, whatever the Host;
 * - else the request's Host when the site lists it: a listener name at the diagnostics role's port (a
 *   script that uploaded to `localhost` follows the Location with its host-only cookie), or a name under
 *   the cookie domain at the port the client used (a proxy in front may use any), over https when
 *   PORTOLAN_DIAGNOSTICS_SECURE_COOKIES says TLS is terminated in front;
 * - else the diagnostics role's listening URL. X-Forwarded-Host is never read.
 *
 * @example
 * diagnosticsLinkBase(site, 'localhost:8300', 'http://127.0.0.1:8300') // 'http://localhost:8300'
 * diagnosticsLinkBase(site, 'evil.example', 'http://127.0.0.1:8300') // 'http://127.0.0.1:8300'
 */
export function diagnosticsLinkBase(site: DiagnosticsSite, requestHost: string | undefined, listening: string): string {
  if (site.publicUrl !== '') return site.publicUrl;
  const listed = listedHost(site, requestHost);
  if (listed === undefined) return listening;
  if (site.listenerNames.includes(listed.name)) return diagnosticsUrlFor(site, requestHost, listening);
  return `${schemeFor(site, listed.name, new URL(listening))}//${listed.name}${listed.port === undefined ? '' : `:${listed.port}`}`;
}

/**
 * The scheme of a link to a listed name: the listeners themselves serve what they listen with (http); a
 * name under the cookie domain is reached through the TLS in front when PORTOLAN_DIAGNOSTICS_SECURE_COOKIES
 * says there is one (a Secure cookie is never sent to an http link), as isSiteOrigin judges origins.
 */
function schemeFor(site: DiagnosticsSite, name: string, listening: URL): string {
  return site.secure && !site.listenerNames.includes(name) ? 'https:' : listening.protocol;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '[::]']);

/**
 * A listening URL a client can follow: one on a wildcard address (every interface) names the machine instead.
 *
 * @example
 * reachableUrl('http://0.0.0.0:8300', 'diag-box') // 'http://diag-box:8300'
 * reachableUrl('http://127.0.0.1:8300', 'diag-box') // 'http://127.0.0.1:8300'
 */
export function reachableUrl(listening: string, machineName: string): string {
  const url = new URL(listening);
  if (!WILDCARD_HOSTS.has(url.hostname) || machineName === '') return listening;
  url.hostname = machineName;
  return url.origin;
}
