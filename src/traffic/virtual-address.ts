import { BlockList, isIP } from 'node:net';
import { formatAddress } from './probe.ts';

/**
 * Where one virtual address of a service listens on this machine, or why it does not: only loopback
 * addresses are bound (the device runs unprivileged beside other software, so it claims no real
 * interface), on the virtual port plus the device's port offset (no root needed for port 80).
 */
export type ListenPlan =
  | { bindable: true; host: string; port: number; url: string }
  | { bindable: false; port: number; reason: string };

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A route domain suffix (`10.0.1.10%2`): the device has a single routing table, so it is dropped. */
const ROUTE_DOMAIN = /%\d+$/;
/** A host prefix (`/32`, `/128`) names the address itself; a shorter one is a network, never bound. */
const HOST_PREFIX = { 4: '/32', 6: '/128' } as const;

const MAX_PORT = 65_535;

/**
 * Plans one declared virtual address on one virtual port.
 *
 * @example
 * listenPlan('127.0.0.1%2', 80, 10_000) // { bindable: true, host: '127.0.0.1', port: 10080, url: 'http://127.0.0.1:10080' }
 * listenPlan('10.0.1.10', 80, 10_000)   // { bindable: false, port: 10080, reason: 'not a loopback address: ...' }
 */
export function listenPlan(address: string, virtualPort: number, portOffset: number): ListenPlan {
  const slash = address.indexOf('/');
  const host = (slash === -1 ? address : address.slice(0, slash)).replace(ROUTE_DOMAIN, '');
  const port = virtualPort + portOffset;
  const family = isIP(host);
  if (family === 0) return { bindable: false, port, reason: `${address} is not an IP address` };
  if (slash !== -1 && address.slice(slash) !== HOST_PREFIX[family as 4 | 6]) return { bindable: false, port, reason: 'a network, not one address: not bound' };
  if (!LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6')) {
    return { bindable: false, port, reason: 'not a loopback address: only 127.0.0.0/8 and ::1 are bound on this device' };
  }
  if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
    return { bindable: false, port, reason: `port ${port} (virtual port ${virtualPort} + offset ${portOffset}) is outside 1-${MAX_PORT}` };
  }
  return { bindable: true, host, port, url: `http://${formatAddress({ host, port })}` };
}

/** Why a listener could not be bound, from the error of `listen` (EADDRINUSE, EADDRNOTAVAIL, EACCES...). */
export function bindFailureReason(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'EADDRINUSE') return 'address in use';
  if (code === 'EADDRNOTAVAIL') return 'address not available';
  if (code === 'EACCES') return 'permission denied';
  return typeof code === 'string' ? `cannot listen (${code})` : 'cannot listen';
}
