import { addressKey, parseAddress } from './address.ts';
import { clip } from './model.ts';
import type { TenantPlan } from './plan.ts';

type Planned = Pick<TenantPlan, 'tenant' | 'services'>;

/** The same listening place however written: `10.0.0.1%2:80` and `10.0.0.1:80` differ, `::1` and `0::1` do not. */
const placeOf = (address: string, port: number) => {
  const parsed = parseAddress(address);
  return `${parsed ? addressKey(parsed) : address}:${port}`;
};

/**
 * The tenants of a deployment whose virtual address and port is already served: by a deployed tenant
 * the deployment does not replace, by an earlier tenant of the same deployment that does not fail
 * itself, or by another service (or the same one twice) of the tenant. Answers, per failing tenant,
 * the message naming the address, the port and the owner's service.
 *
 * @example
 * findAddressConflicts([planOf('T2')], [planOf('T1')]).get('T2')
 * // '/T2/A/svc: virtual address 10.0.0.1 port 80 is already served by /T1/A/svc'
 */
export function findAddressConflicts(plans: readonly Planned[], deployed: readonly Planned[]): Map<string, string> {
  const replaced = new Set(plans.map((p) => p.tenant));
  const owners = new Map<string, string>();
  for (const plan of deployed) {
    if (replaced.has(plan.tenant)) continue;
    for (const service of plan.services) for (const address of service.addresses) owners.set(placeOf(address, service.port), service.key);
  }

  const conflicts = new Map<string, string>();
  for (const plan of plans) {
    const claimed = new Map<string, string>();
    let conflict: string | undefined;
    for (const service of plan.services) {
      for (const address of service.addresses) {
        const place = placeOf(address, service.port);
        const owner = owners.get(place) ?? claimed.get(place);
        if (owner) {
          conflict = `${service.key}: virtual address ${clip(address)} port ${service.port} is already served by ${owner}`;
          break;
        }
        claimed.set(place, service.key);
      }
      if (conflict) break;
    }
    // A tenant that fails claims nothing: it is not deployed.
    if (conflict) conflicts.set(plan.tenant, conflict);
    else for (const [place, owner] of claimed) owners.set(place, owner);
  }
  return conflicts;
}
