import { BlockList, SocketAddress, isIP } from 'node:net';
import { formatAddress } from './probe.ts';

/**
 * Where one virtual address of a service listens on this machine, or why it does not: only loopback
 * addresses are bound (an IPv4-mapped one as its IPv4 address) (the device runs unprivileged beside other software, so it claims no real
 * interface), on the virtual port plus the device's port offset (no root needed for port 80).
 */
export type ListenPlan = { bindable: true; host: string; port: number; url: string } | { bindable: false; port: number; reason: string };

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A route domain suffix (`10.0.1.10%2`): the device has a single routing table, so it is dropped. */
const ROUTE_DOMAIN = /%\d+$/;
/** A host prefix (`/32`, `/128`) names the address itself; a shorter one is a network, never bound. */
const HOST_PREFIX = { 4: '/32', 6: '/128' } as const;

const MAX_PORT = 65_535;

/** What the device does with a declared virtual address (whatever its port): binds `host`, or not, and why. */
export type AddressClass =
  | { bindable: true; host: string }
  | { bindable: false; kind: 'not an address' | 'network' | 'not loopback'; reason: string };

/**
 * The IPv4 address an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `0:0:0:0:0:ffff:7f00:1`, any
 * spelling) stands for, or undefined. Such an address is its IPv4 address on the wire: a socket bound
 * to it takes that address's connections, so the device classifies and binds it as that address.
 */
export function mappedIPv4(ip: string): string | undefined {
  if (isIP(ip) !== 6) return undefined;
  const bytes = new SocketAddress({ address: ip, family: 'ipv6' }).address;
  // SocketAddress writes a mapped address in its canonical form, `::ffff:a.b.c.d`.
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bytes);
  return match?.[1];
}

/**
 * Classifies one declared virtual address: the one place that decides, so that what the device
 * reports of an address (a deployment's warnings) is what its data plane does with it.
 *
 * @example
 * classifyAddress('::ffff:127.0.0.1') // { bindable: true, host: '127.0.0.1' }
 * classifyAddress('10.0.1.10%2')      // { bindable: false, kind: 'not loopback', reason: 'not a loopback address: ...' }
 */
export function classifyAddress(address: string): AddressClass {
  const slash = address.indexOf('/');
  const written = (slash === -1 ? address : address.slice(0, slash)).replace(ROUTE_DOMAIN, '');
  const family = isIP(written);
  if (family === 0) return { bindable: false, kind: 'not an address', reason: `${address} is not an IP address` };
  if (slash !== -1 && address.slice(slash) !== HOST_PREFIX[family as 4 | 6])
    return { bindable: false, kind: 'network', reason: 'a network, not one address: not bound' };
  const host = mappedIPv4(written) ?? written;
  if (!LOOPBACK.check(host, isIP(host) === 4 ? 'ipv4' : 'ipv6')) {
    return {
      bindable: false,
      kind: 'not loopback',
      reason: 'not a loopback address: only 127.0.0.0/8 (also IPv4-mapped) and ::1 are bound on this device',
    };
  }
  return { bindable: true, host };
}

/**
 * Plans one declared virtual address on one virtual port.
 *
 * @example
 * listenPlan('127.0.0.1%2', 80, 10_000) // { bindable: true, host: '127.0.0.1', port: 10080, url: 'http://127.0.0.1:10080' }
 * listenPlan('10.0.1.10', 80, 10_000)   // { bindable: false, port: 10080, reason: 'not a loopback address: ...' }
 */
export function listenPlan(address: string, virtualPort: number, portOffset: number): ListenPlan {
  const port = virtualPort + portOffset;
  const classified = classifyAddress(address);
  if (!classified.bindable) return { bindable: false, port, reason: classified.reason };
  if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
    return { bindable: false, port, reason: `port ${port} (virtual port ${virtualPort} + offset ${portOffset}) is outside 1-${MAX_PORT}` };
  }
  const { host } = classified;
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
