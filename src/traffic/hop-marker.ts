import { randomBytes } from 'node:crypto';

/** More `Via` entries than this and a request is not passed on: a loop through proxies that are not ours. */
export const MAX_HOPS = 16;

/**
 * Who this proxy is in the `Via` header (RFC 9110 7.6.3): `portolan-<12 random hex digits>`, made anew for
 * each data plane and gateway at each start, so a client that forges a `Via` cannot name it unless it was
 * told it, and then only refuses its own request.
 */
export type HopMarker = {
  /** The pseudonym, `portolan-<hex>`. */
  readonly name: string;
  /** The `Via` entry this proxy appends to every request it passes on. */
  readonly via: string;
};

/**
 * A proxy's own marker.
 *
 * @example
 * const marker = createHopMarker(); // { name: 'portolan-3f9a0c11d2e4', via: '1.1 portolan-3f9a0c11d2e4' }
 */
export function createHopMarker(): HopMarker {
  const name = `portolan-${randomBytes(6).toString('hex')}`;
  return { name, via: `1.1 ${name}` };
}

/**
 * Why a request must not be passed on, or undefined: it carries this proxy's own `Via` entry (it has been
 * here before: a pool member leads back here, directly or through other proxies), or it has passed more
 * than MAX_HOPS proxies already. Reads only the `Via` fields; allocates nothing for a request without one.
 */
export function loopProblem(rawHeaders: readonly string[], marker: HopMarker): string | undefined {
  let hops = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 3 || name.toLowerCase() !== 'via') continue;
    const value = rawHeaders[i + 1]!;
    if (value.includes(marker.name)) return 'request loop: it has already passed through this proxy (Via); a pool member leads back here';
    for (let at = value.indexOf(','); at !== -1; at = value.indexOf(',', at + 1)) hops++;
    hops++;
  }
  return hops > MAX_HOPS ? `request passed through more than ${MAX_HOPS} proxies already (Via); not passed on` : undefined;
}
