import { toPointer } from '../../../lib/contract/json-pointer.ts';
import { parseAddress } from './address.ts';
import { tenantWithDefaults } from './defaults.ts';
import { countLines } from './line-count.ts';
import {
  BUILT_IN_MONITORS,
  DEFAULT_VIRTUAL_PORT,
  DEVICE_MONITOR_PATHS,
  MONITOR_CLASS,
  POOL_CLASS,
  SERVICE_CLASS,
  applicationsOf,
  clip,
  isAppliedMonitor,
  isCommonReference,
  isRecord,
  membersOf,
  own,
} from './model.ts';
import { classOf, resolveMember, type Scope } from './references.ts';
import { ruleReferences, tenantRules, type RuleReference, type TenantRules } from './rules-plan.ts';
import { collectWarnings } from './warnings.ts';

/** A pool as the data plane runs it: the members in rotation and whether the HTTP monitor checks them. */
export type PoolPlan = { key: string; members: { host: string; port: number }[]; monitor: 'http' | null };

/**
 * A deployed `Service_HTTP` as the data plane runs it (consumed by the data plane: keep the shape).
 * `addresses` are the string virtual addresses as declared (`127.0.0.1%2`); references and pairs are
 * left out. A service without a pool has a pool with key '' and no members.
 */
export type ServicePlan = {
  key: string;
  addresses: string[];
  port: number;
  pool: PoolPlan;
  /** The rules it runs, in order (rules-plan.ts); only when it names some. */
  iRules?: RuleReference[];
};

/** A tenant ready to deploy: its declaration as stored, its services, its line count and warnings. */
export type TenantPlan = {
  tenant: string;
  declaration: Record<string, unknown>;
  services: ServicePlan[];
  lineCount: number;
  warnings: string[];
  /** What its services' rules may use (texts, pools, data groups); only when a service names rules. */
  rules?: TenantRules;
  /** fingerprint.ts of `declaration`, when it was planned on the checker's thread. */
  fingerprint?: string;
};

export type PlanResult = { ok: true; plan: TenantPlan } | { ok: false; message: string };

/**
 * The rest of the device. References resolve within the tenant's own declaration (a tenant is
 * deployed and replaced whole), so planning needs none of it today.
 */
export type PlanContext = { deployed?: ReadonlyMap<string, { readonly plan: TenantPlan }> };

type Member = Readonly<Record<string, unknown>>;

/**
 * Resolves a (valid) tenant's references and plans what the data plane runs. A reference that
 * resolves to nothing fails the tenant with a message naming its pointer: a `pool` that is not a
 * Pool of the tenant (or any `{bigip}` pool: the device has none of its own), a monitor name outside
 * the built-in set, a `{bigip}` monitor that is not a built-in one under /Common, a `{use}` that does
 * not name a Monitor. References are echoed at most 64 characters long.
 *
 * @example
 * const planned = planTenant('Sample_01', declaration.Sample_01, { deployed });
 * if (!planned.ok) prepared.tenants.push([key, { kind: 'failed', text, message: planned.message }]); // prepared.ts
 */
export function planTenant(tenantName: string, tenant: Readonly<Record<string, unknown>>, _context: PlanContext = {}): PlanResult {
  const stored = tenantWithDefaults(tenant);
  const services: ServicePlan[] = [];
  for (const [appName, application] of applicationsOf(stored)) {
    if (!isRecord(application)) continue;
    const scope: Scope = { tenantName, tenant: stored, appName };
    for (const [name, member] of membersOf(application)) {
      const pointer = toPointer([tenantName, appName, name]);
      if (!isRecord(member)) continue;
      if (own(member, 'class') === POOL_CLASS) {
        const failure = checkMonitors(pointer, member, scope);
        if (failure) return { ok: false, message: failure };
      } else if (own(member, 'class') === SERVICE_CLASS) {
        const pool = poolOf(pointer, member, scope);
        if (typeof pool === 'string') return { ok: false, message: pool };
        const iRules = ruleReferences(pointer, member, scope);
        if (typeof iRules === 'string') return { ok: false, message: iRules };
        services.push({ ...servicePlan(pointer, member, pool), ...(iRules.length > 0 ? { iRules } : {}) });
      }
    }
  }
  let rules: TenantRules | undefined;
  if (services.some((service) => service.iRules)) {
    const read = tenantRules(tenantName, stored, poolPlan);
    if (!read.ok) return { ok: false, message: read.message };
    rules = read.rules;
  }
  return {
    ok: true,
    plan: {
      tenant: tenantName,
      declaration: stored,
      services,
      lineCount: countLines(stored),
      warnings: collectWarnings(tenantName, stored),
      ...(rules ? { rules } : {}),
    },
  };
}

const quoted = (reference: string) => `'${clip(reference)}'`;

/** The pool a service names, undefined when it names none, or the failure message. */
function poolOf(pointer: string, service: Member, scope: Scope): { key: string; pool: Member } | undefined | string {
  const reference = own(service, 'pool');
  if (reference === undefined) return undefined;
  const where = `${pointer}/pool`;
  if (isRecord(reference) && typeof own(reference, 'bigip') === 'string') {
    return `${where}: 01020036:3: The requested pool (${clip(own(reference, 'bigip') as string)}) was not found.`;
  }
  const name = isRecord(reference) ? own(reference, 'use') : reference;
  if (typeof name !== 'string') return `${where}: the pool reference names no pool`;
  // Kept and reported (warnings.ts): the service runs without members.
  if (isCommonReference(name, scope.tenantName)) return undefined;
  const target = resolveMember(name, scope);
  if (!target) return `${where}: pool ${quoted(name)} does not exist`;
  const cls = classOf(target.member);
  if (cls !== POOL_CLASS) return `${where}: ${quoted(name)} is not a Pool (class ${clip(cls ?? 'none')})`;
  return { key: target.key, pool: target.member as Member };
}

/** The failure message of the first monitor reference that resolves to nothing, if any. */
function checkMonitors(pointer: string, pool: Member, scope: Scope): string | undefined {
  const monitors = own(pool, 'monitors');
  for (const [index, monitor] of (Array.isArray(monitors) ? monitors : []).entries()) {
    const where = `${pointer}/monitors/${index}`;
    if (typeof monitor === 'string') {
      if (!BUILT_IN_MONITORS.has(monitor)) return `${where}: monitor ${quoted(monitor)} is not a built-in monitor`;
      continue;
    }
    const bigip = isRecord(monitor) ? own(monitor, 'bigip') : undefined;
    if (typeof bigip === 'string') {
      if (!DEVICE_MONITOR_PATHS.has(bigip)) return `${where}: 01020036:3: The requested monitor (${clip(bigip)}) was not found.`;
      continue;
    }
    const use = isRecord(monitor) ? own(monitor, 'use') : undefined;
    if (typeof use !== 'string') return `${where}: the monitor reference names no monitor`;
    if (isCommonReference(use, scope.tenantName)) continue; // kept and reported, never applied
    const target = resolveMember(use, scope);
    if (!target) return `${where}: monitor ${quoted(use)} does not exist`;
    const cls = classOf(target.member);
    if (cls !== MONITOR_CLASS) return `${where}: ${quoted(use)} is not a Monitor (class ${clip(cls ?? 'none')})`;
  }
  return undefined;
}

function servicePlan(key: string, service: Member, pool: { key: string; pool: Member } | undefined): ServicePlan {
  const addresses = own(service, 'virtualAddresses');
  const port = own(service, 'virtualPort');
  return {
    key,
    addresses: (Array.isArray(addresses) ? addresses : []).filter((a): a is string => typeof a === 'string'),
    port: typeof port === 'number' ? port : DEFAULT_VIRTUAL_PORT,
    pool: pool ? poolPlan(pool.key, pool.pool) : { key: '', members: [], monitor: null },
  };
}

/** Each server address × its member's port, for the members in rotation (not `enable: false`, not disabled or offline). */
function poolPlan(key: string, pool: Member): PoolPlan {
  const members = own(pool, 'members');
  const monitors = own(pool, 'monitors');
  const inRotation = (Array.isArray(members) ? members : []).filter(
    (m): m is Member =>
      isRecord(m) && own(m, 'enable') !== false && own(m, 'adminState') !== 'disable' && own(m, 'adminState') !== 'offline',
  );
  return {
    key,
    members: inRotation.flatMap((member) => {
      const port = own(member, 'servicePort') as number;
      const hosts = own(member, 'serverAddresses');
      return (Array.isArray(hosts) ? hosts : [])
        .filter((h): h is string => typeof h === 'string')
        .map((host) => ({ host: parseAddress(host)?.ip ?? host.split(/[%/]/)[0]!, port }));
    }),
    monitor: Array.isArray(monitors) && monitors.some(isAppliedMonitor) ? 'http' : null,
  };
}
