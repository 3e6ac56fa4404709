import { isSiteOrigin, type DiagnosticsSite } from './diagnostics-site.ts';

/** Request headers by lower-case name, as the HTTP adapter hands them over (domain code knows no node:http). */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** What browsers send as Sec-Fetch-Site other than `cross-site`; any other value (or two of them) is refused. */
const NOT_CROSS_SITE = new Set(['same-origin', 'same-site', 'none']);

/** An Origin header as browsers serialise it (`scheme://host[:port]`, lower case), parsed; undefined for anything else, `null` included. */
function parseOrigin(value: string): URL | undefined {
  const url = URL.parse(value);
  return url !== null && url.origin !== 'null' && url.origin === value.toLowerCase() ? url : undefined;
}

/**
 * Login CSRF (OWASP: check the source of a login form post): true when a browser says the form came from
 * a page that is not one of the service's own, so an attacker's page cannot log the browser into the
 * attacker's account. Decided by, in order:
 * - `Sec-Fetch-Site`: `cross-site` or any value browsers do not send is refused; `same-origin`, `same-site`
 *   and `none` (an address typed in) go on to the Origin, so same-site pages are allowed only from the
 *   site's own origins (with a cookie domain: every name under it, which shares the session anyway);
 * - `Origin`, when present: one of the site's origins (`null` never is);
 * - else `Referer`, when present: its origin is one of the site's.
 * A request with none of them (curl, scripts, the snapshot client) is not a browser's cross-site post.
 *
 * @example
 * isCrossSiteLogin(site, { origin: 'https://evil.example' }) // true
 * isCrossSiteLogin(site, {}) // false
 */
export function isCrossSiteLogin(site: DiagnosticsSite, headers: RequestHeaders): boolean {
  const fetchSite = headers['sec-fetch-site'];
  if (fetchSite !== undefined && (typeof fetchSite !== 'string' || !NOT_CROSS_SITE.has(fetchSite.toLowerCase()))) return true;
  const host = typeof headers.host === 'string' ? headers.host : undefined;
  const { origin, referer } = headers;
  if (origin !== undefined) {
    const parsed = typeof origin === 'string' ? parseOrigin(origin) : undefined;
    return parsed === undefined || !isSiteOrigin(site, parsed, host);
  }
  if (referer !== undefined) {
    const parsed = typeof referer === 'string' ? URL.parse(referer) : null;
    return parsed === null || !isSiteOrigin(site, parsed, host);
  }
  return false;
}
