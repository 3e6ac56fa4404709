import { MONITOR_DEFAULTS } from '../../../../lib/declaration-json.ts';
import type { Fact } from '../fact.ts';
import { scriptMeasures } from '../script-measures.ts';
import type { DeviceConfig, Virtual } from './config-model.ts';

/** Services named per shared listener in a finding (the count is always whole). */
const LISTED_SERVICES = 20;
/** The device's built-in iRule that answers every HTTP request with a redirect to HTTPS. */
export const HTTPS_REDIRECT = '/Common/_sys_https_redirect';
/** Monitors followed along `defaults-from` at most: a loop in a hostile file ends here. */
const MAX_INHERITANCE = 8;

/** Where an object sits: partition (tenant), folder (application, '' at the partition's root) and the rest of its name. */
function placeOf(path: string) {
  const parts = path.split('/').filter(Boolean);
  const application = parts.length >= 3 ? parts[1]! : '';
  return { tenant: parts[0] ?? '', application, name: parts.slice(application ? 2 : 1).join('/') };
}

/**
 * The collections of the rule language (README.md, "Collections") from a device's configuration files:
 * partitions are tenants (but Common, the device's own), folders below them applications, `ltm virtual`
 * services, `ltm pool` pools and their members, `ltm monitor` monitors and `ltm rule` scripts. Ids are
 * the objects' full paths (`/Common/web_pool`). `complete` false (a file that was cut or did not end)
 * makes an unresolved pool reference count as found: it may be in what was not read.
 */
export function configFacts(config: DeviceConfig, complete: boolean) {
  const tenants = [...config.partitions].filter((p) => p !== 'Common');
  const folders = [...config.folders].filter((folder) => tenants.includes(placeOf(folder).tenant));
  const listed = serviceFacts(config, complete);
  const services = listed.map((entry) => entry.fact);
  const pools = [...config.pools.values()].map((pool): Fact => {
    const place = placeOf(pool.path);
    return {
      id: pool.path,
      fields: { ...place, memberCount: pool.members.length, monitorCount: pool.monitors.length, monitors: pool.monitors },
    };
  });
  const within = (folder: string, path: string) => path.startsWith(`${folder}/`);
  return {
    tenants: tenants.map(
      (name): Fact => ({ id: `/${name}`, fields: { name, applicationCount: folders.filter((f) => placeOf(f).tenant === name).length } }),
    ),
    applications: folders.map((folder): Fact => {
      const { tenant, application } = placeOf(`${folder}/x`);
      return {
        id: folder,
        fields: {
          tenant,
          application,
          name: application,
          template: '',
          serviceCount: services.filter((s) => within(folder, s.id)).length,
          poolCount: pools.filter((p) => within(folder, p.id)).length,
        },
      };
    }),
    services,
    pools,
    members: [...config.pools.values()].flatMap((pool) => {
      const { tenant, application } = placeOf(pool.path);
      return pool.members.map((member): Fact => {
        const address = member.address || member.name.slice(member.name.lastIndexOf('/') + 1);
        return {
          id: `${pool.path} ${address}:${member.port}`,
          fields: { tenant, application, pool: pool.path, address, port: member.port },
        };
      });
    }),
    monitors: [...config.monitors.values()].map((monitor): Fact => {
      const inherited = (key: 'interval' | 'timeout') => {
        let at = monitor;
        for (let hop = 0; hop < MAX_INHERITANCE; hop++) {
          if (at[key] !== undefined) return at[key];
          const parent = config.monitors.get(at.parent);
          if (!parent || parent === monitor) break;
          at = parent;
        }
        return MONITOR_DEFAULTS[key];
      };
      const { tenant, application, name } = placeOf(monitor.path);
      return {
        id: monitor.path,
        fields: { tenant, application, name, monitorType: monitor.type, interval: inherited('interval'), timeout: inherited('timeout') },
      };
    }),
    listeners: listenerFacts(listed),
    scripts: config.scripts.map((script): Fact => {
      const parts = script.path.split('/').filter(Boolean);
      return {
        id: script.path,
        fields: { partition: parts[0] ?? '', name: parts.slice(1).join('/'), file: script.file, ...scriptMeasures(script.text) },
      };
    }),
  };
}

/** Virtual servers as services. Portolan's device (as the declarative service does) names the virtual of a service's second address `<name>-1-`: one service again. */
function serviceFacts(config: DeviceConfig, complete: boolean): { fact: Fact; protocol: string }[] {
  const byPath = new Map<string, { virtual: Virtual; addresses: string[] }>();
  for (const virtual of config.virtuals) {
    const base = /^(.*)-\d+-$/.exec(virtual.path)?.[1];
    const main = base === undefined ? undefined : byPath.get(base);
    if (main && main.virtual.port === virtual.port) main.addresses.push(virtual.address);
    else byPath.set(virtual.path, { virtual, addresses: virtual.address === '' ? [] : [virtual.address] });
  }
  return [...byPath.values()].map(({ virtual, addresses }) => {
    const tls =
      virtual.declaredClass === 'Service_HTTPS' || virtual.profiles.some((p) => config.clientSsl.has(p) || /\/clientssl[^/]*$/.test(p));
    const cls =
      virtual.declaredClass ||
      (virtual.forwarding
        ? 'Service_Forwarding'
        : tls
          ? 'Service_HTTPS'
          : virtual.profiles.some((p) => /\/http$/.test(p))
            ? 'Service_HTTP'
            : virtual.protocol === 'udp'
              ? 'Service_UDP'
              : 'Service_TCP');
    const poolFound = virtual.pool === '' || config.pools.has(virtual.pool) || !complete;
    const fields = {
      ...placeOf(virtual.path),
      class: cls,
      virtualAddresses: addresses,
      virtualPort: virtual.port,
      pool: virtual.pool,
      poolFound,
      tls,
      redirectOnly: virtual.rules.length === 1 && virtual.rules[0] === HTTPS_REDIRECT,
    };
    return { fact: { id: virtual.path, fields }, protocol: virtual.protocol };
  });
}

/** Address and port shared by services; a protocol other than TCP listens apart (`10.0.0.1:53/udp`). */
function listenerFacts(services: readonly { fact: Fact; protocol: string }[]): Fact[] {
  const listeners = new Map<string, { address: string; port: number; services: string[] }>();
  for (const { fact: service, protocol } of services) {
    const { virtualAddresses, virtualPort } = service.fields as { virtualAddresses: string[]; virtualPort: number };
    for (const address of virtualAddresses) {
      const key = `${address}:${virtualPort}${protocol === 'tcp' ? '' : `/${protocol}`}`;
      const entry = listeners.get(key) ?? { address, port: virtualPort, services: [] };
      entry.services.push(service.id);
      listeners.set(key, entry);
    }
  }
  return [...listeners].map(([id, { address, port, services }]) => ({
    id,
    fields: { address, port, serviceCount: services.length, services: services.slice(0, LISTED_SERVICES) },
  }));
}
