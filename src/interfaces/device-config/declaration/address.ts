import { isIPv4, isIPv6 } from 'node:net';
import { mappedIPv4 } from '../../../traffic/virtual-address.ts';

/** A string address of a declaration (`10.0.0.1`, `10.0.0.1%2`, `fe80::1%3/64`), taken apart. */
export type ParsedAddress = {
  /** The IP address alone, as written (no route domain, no prefix): what a member's host is. */
  ip: string;
  family: 4 | 6;
  /** `%N`; 0 (the default route domain) when absent. */
  routeDomain: number;
  /** `/N`; the full length (32 or 128) when absent. */
  prefix: number;
};

const FORM = /^([^%/]+)(?:%([0-9]{1,5}))?(?:\/([0-9]{1,3}))?$/;

/** The parts of an address, or undefined when it is not an IPv4 or IPv6 address. */
export function parseAddress(text: string): ParsedAddress | undefined {
  const match = FORM.exec(text);
  if (!match) return undefined;
  const ip = match[1]!;
  const family = isIPv4(ip) ? 4 : isIPv6(ip) ? 6 : undefined;
  if (!family) return undefined;
  const full = family === 4 ? 32 : 128;
  const prefix = match[3] === undefined ? full : Number(match[3]);
  if (prefix > full) return undefined;
  return { ip, family, routeDomain: match[2] === undefined ? 0 : Number(match[2]), prefix };
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail counts as two). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The same address written any way gives the same key: `::1` and `0:0::1`, `10.0.0.1` and
 * `10.0.0.1%0/32`, and an IPv4-mapped address and its IPv4 address (`::ffff:127.0.0.1/128` and
 * `127.0.0.1`: one socket takes both, see src/traffic/virtual-address.ts).
 */
export function addressKey(address: ParsedAddress): string {
  // A mapped address is its IPv4 address only as a host or an IPv4-sized network (prefix 96 and up); a shorter
  // prefix is a network of IPv6 addresses, keyed as IPv6.
  const mapped = address.family === 6 && address.prefix >= 96 ? mappedIPv4(address.ip) : undefined;
  if (mapped) return `${mapped}%${address.routeDomain}/${address.prefix - 96}`;
  const ip =
    address.family === 4
      ? address.ip
      : ipv6Groups(address.ip)
          .map((g) => g.toString(16))
          .join(':');
  return `${ip}%${address.routeDomain}/${address.prefix}`;
}
