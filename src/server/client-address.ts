// Which address a request comes from. Behind a load balancer every request arrives from the balancer's
// address; the login backoff counts failures per client address, so one client's guesses would slow every
// other client down (and the balancer's own health checks). A balancer named in PORTOLAN_TRUSTED_PROXIES
// appends the client's address to X-Forwarded-For (HAProxy: `option forwardfor`); its last entry is then the
// client. Entries before it are whatever the client sent and are never believed.

/** The trusted proxies' addresses, as `PORTOLAN_TRUSTED_PROXIES` gives them (comma list), normalised. */
export function trustedProxies(setting: string): ReadonlySet<string> {
  return new Set(
    setting
      .split(',')
      .map((address) => plainAddress(address.trim()))
      .filter((address) => address !== ''),
  );
}

/**
 * The request's client address: the socket's peer, or, when that peer is a trusted proxy, the last address
 * of X-Forwarded-For (the one the proxy appended). A missing or malformed entry keeps the peer's address.
 *
 * @example clientAddress('10.0.0.5', '203.0.113.7, 198.51.100.2', new Set(['10.0.0.5'])) // '198.51.100.2'
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: ReadonlySet<string>,
): string | undefined {
  if (peer === undefined || trusted.size === 0 || !trusted.has(plainAddress(peer))) return peer;
  const header = Array.isArray(forwardedFor) ? forwardedFor.at(-1) : forwardedFor;
  if (header === undefined) return peer;
  const last = header.slice(header.lastIndexOf(',') + 1).trim();
  return ADDRESS.test(last) ? last : peer;
}

/** An IPv4 or IPv6 address, as a proxy writes it (no port, no brackets). */
const ADDRESS = /^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]{2,45})$/;

/** `::ffff:10.0.0.5` (an IPv4 peer on a dual-stack socket) is `10.0.0.5`. */
const plainAddress = (address: string) =>
  address.toLowerCase().startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
