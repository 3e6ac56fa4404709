import { POOL_CLASS, SERVICE_CLASS, applicationsOf, isRecord, membersOf, own } from './model.ts';

/**
 * Configuration lines each object the device applies writes (designed; the real product counts the
 * lines of the configuration it generates). Chosen so the spec's answers come out: `firstDeclaration`
 * gives 26 (`success` example), `realDeclaration` 31 (`withWarnings` example). What the device does
 * not apply (unmodelled members and properties) writes no line.
 */
export const LINES = {
  /** The tenant's partition and folder. */
  tenant: 2,
  /** The application's folder. */
  application: 1,
  /** A virtual server (name, destination, protocol, mask, pool, profiles, translation, closing). */
  service: 8,
  /** Each entry of `virtualAddresses`: the virtual address object. */
  virtualAddress: 2,
  /** A pool (name, load balancing, members block, closing). */
  pool: 4,
  /** Each entry of `members` (whatever its number of addresses or its state). */
  poolMember: 4,
  /** Each entry of `monitors` (a monitor's settings: interval, timeout, send, receive, closing). */
  monitor: 5,
} as const;

const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);

/** The number of configuration lines a tenant's declaration produces (see LINES). Deterministic. */
export function countLines(tenant: Readonly<Record<string, unknown>>): number {
  let lines = LINES.tenant;
  for (const [, application] of applicationsOf(tenant)) {
    if (!isRecord(application)) continue;
    lines += LINES.application;
    for (const [, member] of membersOf(application)) {
      if (!isRecord(member)) continue;
      const cls = own(member, 'class');
      if (cls === SERVICE_CLASS) lines += LINES.service + LINES.virtualAddress * count(own(member, 'virtualAddresses'));
      if (cls === POOL_CLASS)
        lines += LINES.pool + LINES.poolMember * count(own(member, 'members')) + LINES.monitor * count(own(member, 'monitors'));
    }
  }
  return lines;
}
