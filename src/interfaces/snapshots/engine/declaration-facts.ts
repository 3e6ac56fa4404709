import type { Fact } from './fact.ts';
import { DEFAULT_PORTS, isRecord, MONITOR_DEFAULTS, numberOr, ofClass, reference, strings } from '../../../lib/declaration-json.ts';

/** Services named per shared listener in a finding (the count is always whole). */
const LISTED_SERVICES = 20;

/**
 * The collections derived from `config/declarations.json`: an ADC declaration (or an AS3 request
 * wrapping one, `{class: AS3, declaration}`). Tenants, applications, services (`Service_*`), pools and
 * monitors are found by `class`, as the device does; defaults are the device's. Text that is not a
 * declaration gives empty collections.
 */
export function declarationFacts(text: string | undefined) {
  const facts = {
    tenants: [] as Fact[],
    applications: [] as Fact[],
    services: [] as Fact[],
    pools: [] as Fact[],
    members: [] as Fact[],
    monitors: [] as Fact[],
    listeners: [] as Fact[],
  };
  let adc: unknown;
  try {
    adc = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return facts;
  }
  if (isRecord(adc) && adc.class === 'AS3') adc = adc.declaration;
  if (!isRecord(adc)) return facts;

  const poolIds = new Set<string>();
  type Service = {
    tenant: string;
    application: string;
    name: string;
    class: string;
    virtualAddresses: string[];
    virtualPort: number;
    pool: string;
    tls: boolean;
    redirectOnly: boolean;
  };
  const pending: { id: string; fields: Service; local: ReadonlySet<string> }[] = [];
  for (const [tenant, tenantBody] of ofClass(adc, (cls) => cls === 'Tenant')) {
    const applications = ofClass(tenantBody, (cls) => cls === 'Application');
    facts.tenants.push({ id: `/${tenant}`, fields: { name: tenant, applicationCount: applications.length } });
    for (const [application, app] of applications) {
      const at = { tenant, application };
      const base = `/${tenant}/${application}`;
      const pools = ofClass(app, (cls) => cls === 'Pool');
      const services = ofClass(app, (cls) => cls.startsWith('Service_'));
      facts.applications.push({
        id: base,
        fields: { ...at, name: application, template: String(app.template ?? ''), serviceCount: services.length, poolCount: pools.length },
      });
      for (const [name, pool] of pools) {
        const id = `${base}/${name}`;
        poolIds.add(id);
        const groups = Array.isArray(pool.members) ? pool.members.filter(isRecord) : [];
        const members = groups.flatMap((group) =>
          strings(group.serverAddresses).map((address) => ({ address, port: numberOr(group.servicePort, 0) })),
        );
        const monitors = Array.isArray(pool.monitors) ? pool.monitors.map(reference) : [];
        facts.pools.push({ id, fields: { ...at, name, memberCount: members.length, monitorCount: monitors.length, monitors } });
        for (const { address, port } of members)
          facts.members.push({ id: `${id} ${address}:${port}`, fields: { ...at, pool: id, address, port } });
      }
      for (const [name, monitor] of ofClass(app, (cls) => cls === 'Monitor')) {
        const fields = {
          ...at,
          name,
          monitorType: String(monitor.monitorType ?? ''),
          interval: numberOr(monitor.interval, MONITOR_DEFAULTS.interval),
          timeout: numberOr(monitor.timeout, MONITOR_DEFAULTS.timeout),
        };
        facts.monitors.push({ id: `${base}/${name}`, fields });
      }
      const local = new Set(pools.map(([name]) => name));
      for (const [name, service] of services) {
        const cls = String(service.class);
        const fields: Service = {
          ...at,
          name,
          class: cls,
          virtualAddresses: strings(service.virtualAddresses),
          virtualPort: numberOr(service.virtualPort, DEFAULT_PORTS[cls] ?? 0),
          pool: reference(service.pool),
          tls: cls === 'Service_HTTPS' || service.serverTLS !== undefined,
          // Its only iRule is the device's redirect to HTTPS (as a device archive's redirect virtuals).
          redirectOnly:
            Array.isArray(service.iRules) && service.iRules.length === 1 && reference(service.iRules[0]) === '/Common/_sys_https_redirect',
        };
        pending.push({ id: `${base}/${name}`, fields, local });
      }
    }
  }
  // A service's pool is found in its own application, by full path, or (`/Common/...`) on the device itself.
  const listeners = new Map<string, string[]>();
  for (const { id, fields, local } of pending) {
    const pool = fields.pool;
    const poolFound = pool === '' || local.has(pool) || poolIds.has(pool) || pool.startsWith('/Common/');
    facts.services.push({ id, fields: { ...fields, poolFound } });
    for (const address of fields.virtualAddresses) {
      const key = `${address}:${fields.virtualPort}`;
      const services = listeners.get(key);
      if (services) services.push(id);
      else listeners.set(key, [id]);
    }
  }
  for (const [key, services] of listeners) {
    const split = key.lastIndexOf(':');
    // The count is whole; the names quoted are the first few (a hostile declaration may hold thousands).
    facts.listeners.push({
      id: key,
      fields: {
        address: key.slice(0, split),
        port: Number(key.slice(split + 1)),
        serviceCount: services.length,
        services: services.slice(0, LISTED_SERVICES),
      },
    });
  }
  return facts;
}
