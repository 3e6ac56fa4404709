// How the gateway recognises a client-registration request (by method, path and Host), and the CORS its
// own reference page needs to send one (a browser cannot set Host, so the page calls the registration host).
import { runStages, type Stage } from '../server/stages.ts';

/** Where client registration (D) is answered, from the registration settings. */
export type RegistrationRoute = {
  /** The configured registration path (seed default `/vendor-oauth2/v1/client-register`). */
  path: string;
  /** The configured host name, compared with the request's Host header. */
  host: string;
  /** The path of `registerClient` in the spec, which the role app routes. */
  operationPath: string;
  /** Largest body collected by Content-Length; a longer one is answered 413. */
  maxBodyBytes: number;
  /** Idle timeout of a registration connection (seconds). */
  sessionTimeoutSeconds: number;
  /** Longest a registration connection may stay open (seconds). */
  sessionLifetimeSeconds: number;
};

/**
 * Seed D: a request is a registration request only when the method is POST, the path equals the
 * configured path (the caller checks it) and the Host equals the configured host name. Host names are
 * case-insensitive (RFC 9110 4.2.3); the port, when configured, must match too.
 */
export function isRegistrationRequest(route: Pick<RegistrationRoute, 'host'>, method: string, host: string | undefined): boolean {
  return method === 'POST' && host !== undefined && host.toLowerCase() === route.host.toLowerCase();
}

/** Loopback names and addresses: `localhost` and names under it (RFC 6761), 127.0.0.0/8, ::1 (and its IPv4-mapped forms). */
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare.endsWith('.localhost') ||
    bare === '::1' ||
    /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(bare) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(bare)
  );
}

/**
 * Whether `origin` is the gateway's own reference page, as loaded through the connection that arrived on
 * `localAddress`: `http://<host>:<gatewayPort>` where the host is that address, or a loopback name when the
 * connection is a loopback one (the page at http://127.0.0.1:8080 calling http://localhost:8080). Any other
 * site, or another port, is not.
 *
 * @example
 * isGatewayPageOrigin('http://127.0.0.1:8080', '127.0.0.1', 8080) // true
 * isGatewayPageOrigin('http://evil.example:8080', '127.0.0.1', 8080) // false
 */
export function isGatewayPageOrigin(origin: string | undefined, localAddress: string | undefined, gatewayPort: number): boolean {
  if (origin === undefined || localAddress === undefined) return false;
  const url = URL.parse(origin);
  if (url === null || url.protocol !== 'http:' || url.origin !== origin.toLowerCase()) return false;
  if (Number(url.port || 80) !== gatewayPort) return false;
  const local = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  const here = local.includes(':') ? `[${local}]` : local;
  return url.hostname === here.toLowerCase() || (isLoopback(url.hostname) && isLoopback(local));
}

/** What the gateway's reference page may send to the registration route across origins (the form, and the spec's User-Agent parameter). */
const PAGE_CORS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'content-type, user-agent',
  'access-control-max-age': '600',
} as const;

/**
 * CORS for the gateway's own reference page on the registration route. Registration is recognised by its
 * Host (the registration host, `localhost:<gateway port>` by default), which a browser cannot set: the
 * page's "try it" therefore calls `http://<registration host><path>`, another origin than the page's
 * (`http://127.0.0.1:<gateway port>`). For a request that is one to the registration route (configured
 * path and Host) from the gateway's page only (isGatewayPageOrigin), this stage answers the CORS preflight
 * (`OPTIONS` asking for POST: 204) and adds `Access-Control-Allow-Origin` to the registration's answer
 * made by `next` (the gateway's own stages, unchanged). Every other request, a registration from any other
 * origin included, passes on as before: how registration is routed does not change.
 *
 * @example
 * const stages = [registrationPageCors(route, () => gatewayPort, gatewayStages), ...gatewayStages];
 */
export function registrationPageCors(
  route: Pick<RegistrationRoute, 'path' | 'host'>,
  gatewayPort: () => number,
  next: readonly Stage[],
): Stage {
  return (request) => {
    const origin = request.headers.origin;
    const query = request.url.indexOf('?');
    const path = query === -1 ? request.url : request.url.slice(0, query);
    if (origin === undefined || path !== route.path) return undefined;
    if (request.headers.host?.toLowerCase() !== route.host.toLowerCase()) return undefined;
    if (!isGatewayPageOrigin(origin, request.localAddress, gatewayPort())) return undefined;
    const allow = { 'access-control-allow-origin': origin, vary: 'Origin' };
    if (request.method === 'OPTIONS') {
      if (request.headers['access-control-request-method'] !== 'POST') return undefined;
      return { status: 204, headers: { ...allow, ...PAGE_CORS }, aside: 'debug', log: { preflight: 'registration' } };
    }
    if (request.method !== 'POST') return undefined;
    return runStages(next, request).then((answer) =>
      answer.rawHeaders
        ? { ...answer, rawHeaders: [...answer.rawHeaders, 'Access-Control-Allow-Origin', origin, 'Vary', 'Origin'] }
        : { ...answer, headers: { ...answer.headers, ...allow } },
    );
  };
}
