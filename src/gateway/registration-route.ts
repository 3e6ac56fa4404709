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
