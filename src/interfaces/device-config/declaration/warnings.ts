import { escapeSegment } from '../../../lib/contract/json-pointer.ts';
import { classifyAddress } from '../../../traffic/virtual-address.ts';
import {
  APPLICATION_PROPERTIES,
  APPLIED,
  DATA_GROUP_CLASS,
  IRULE_CLASS,
  POOL_CLASS,
  SERVICE_CLASS,
  TENANT_PROPERTIES,
  applicationsOf,
  capList,
  clip,
  isAppliedMonitor,
  isCommonReference,
  isRecord,
  membersOf,
  own,
} from './model.ts';
import { classOf, resolveMember, type Scope } from './references.ts';

const MAX_WARNINGS = 100;
const MAX_WARNING_LENGTH = 200;
const NOT_APPLIED = 'not modelled by this device; kept as given, not applied';

type Record_ = Readonly<Record<string, unknown>>;

/**
 * What a (valid) tenant declares that the device does not apply, one `"<pointer>: <what>"` each, in
 * the words of the spec's `withWarnings` example: at each level first the properties it does not
 * model, then the values it applies differently (template, load balancing, addresses, monitors,
 * address discovery), then its children in declaration order. `label`, `remark`, `controls` and
 * `class` are never warned about. At most 100, then `... and N more`.
 */
export function collectWarnings(tenantName: string, tenant: Record_): string[] {
  const warnings: string[] = [];
  const warn = (pointer: string, what: string) => warnings.push(clip(`${pointer}: ${what}`, MAX_WARNING_LENGTH));
  const at = (pointer: string, key: string | number) => `${pointer}/${escapeSegment(key)}`;
  const unmodelled = (pointer: string, node: Record_, applied: ReadonlySet<string>, children?: ReadonlySet<string>) => {
    for (const key of Object.keys(node)) {
      if (!applied.has(key) && (!children || children.has(key))) warn(at(pointer, key), NOT_APPLIED);
    }
  };

  const tenantPointer = at('', tenantName);
  unmodelled(tenantPointer, tenant, APPLIED.tenant, TENANT_PROPERTIES);
  for (const [appName, application] of applicationsOf(tenant)) {
    if (!isRecord(application)) continue;
    const appPointer = at(tenantPointer, appName);
    unmodelled(appPointer, application, APPLIED.application, APPLICATION_PROPERTIES);
    const template = own(application, 'template');
    if (typeof template === 'string' && template !== 'generic')
      warn(at(appPointer, 'template'), `template '${clip(template)}' is applied as 'generic'`);

    for (const [name, member] of membersOf(application)) {
      if (!isRecord(member)) continue;
      const pointer = at(appPointer, name);
      const cls = own(member, 'class');
      if (cls === SERVICE_CLASS) serviceWarnings(pointer, member);
      else if (cls === POOL_CLASS) poolWarnings(pointer, member, { tenantName, tenant, appName });
      else if (cls === IRULE_CLASS && isRunnableRule(member)) continue;
      else if (cls === DATA_GROUP_CLASS && own(member, 'storageType') !== 'external') continue;
      else if (cls === DATA_GROUP_CLASS) warn(pointer, 'an external data group is kept, not applied: rules see no records of it');
      else warn(pointer, `class ${clip(String(cls))} is not modelled by this device; kept as given, not applied`);
    }
  }
  return capList(warnings, MAX_WARNINGS);

  function serviceWarnings(pointer: string, service: Record_) {
    unmodelled(pointer, service, APPLIED.service);
    const pool = own(service, 'pool');
    const poolName = isRecord(pool) ? own(pool, 'use') : pool;
    if (isCommonReference(poolName, tenantName))
      warn(at(pointer, 'pool'), `pool '${clip(poolName)}' of tenant Common is kept, not followed: this service has no members here`);
    const rules = own(service, 'iRules');
    (Array.isArray(rules) ? rules : []).forEach((rule, index) => {
      const name = isRecord(rule) ? own(rule, 'use') : rule;
      if (isCommonReference(name, tenantName))
        warn(at(at(pointer, 'iRules'), index), `iRule '${clip(name)}' of tenant Common is kept, not followed: it does not run here`);
    });
    const addresses = own(service, 'virtualAddresses');
    (Array.isArray(addresses) ? addresses : []).forEach((address, index) => {
      const where = at(at(pointer, 'virtualAddresses'), index);
      if (typeof address === 'string') {
        // The data plane's own classification: what is said here is what it does (an IPv4-mapped loopback address is bound).
        const classified = classifyAddress(address);
        if (classified.bindable) return;
        if (classified.kind === 'network') warn(where, `${clip(address)} is a network, not one address; kept, not bound`);
        else warn(where, `${clip(address)} is not a loopback address; kept, not bound`);
      } else if (Array.isArray(address)) {
        warn(where, 'a [destination, source] pair is kept, not bound');
      } else {
        warn(where, 'an address reference is kept, not bound');
      }
    });
  }

  function poolWarnings(pointer: string, pool: Record_, scope: Scope) {
    unmodelled(pointer, pool, APPLIED.pool);
    const mode = own(pool, 'loadBalancingMode');
    if (typeof mode === 'string' && mode !== 'round-robin')
      warn(at(pointer, 'loadBalancingMode'), `load balancing mode '${clip(mode)}' is applied as 'round-robin'`);
    const monitors = own(pool, 'monitors');
    (Array.isArray(monitors) ? monitors : []).forEach((monitor, index) => {
      if (!isAppliedMonitor(monitor)) warn(at(at(pointer, 'monitors'), index), monitorNotApplied(monitor, scope));
    });
    const members = own(pool, 'members');
    (Array.isArray(members) ? members : []).forEach((member, index) => {
      if (!isRecord(member)) return;
      const where = at(at(pointer, 'members'), index);
      unmodelled(where, member, APPLIED.poolMember);
      const discovery = own(member, 'addressDiscovery');
      if (typeof discovery === 'string' && discovery !== 'static') {
        warn(at(where, 'addressDiscovery'), `address discovery '${clip(discovery)}' is not applied; only serverAddresses are used`);
      } else if (isRecord(discovery)) {
        const named = own(discovery, 'use') ?? own(discovery, 'bigip');
        const what = typeof named === 'string' ? `address discovery '${clip(named)}'` : 'an address discovery reference';
        warn(at(where, 'addressDiscovery'), `${what} is not applied; only serverAddresses are used`);
      }
    });
  }
}

/** An `iRule` whose text is given (as text or base64): it runs, nothing to warn about. */
function isRunnableRule(rule: Record_): boolean {
  const body = own(rule, 'iRule');
  return typeof body === 'string' || (isRecord(body) && typeof own(body, 'base64') === 'string');
}

/** `monitor 'tcp' is not applied`; a `{use}` also names the class of what it uses. */
function monitorNotApplied(monitor: unknown, scope: Scope): string {
  const name = typeof monitor === 'string' ? monitor : isRecord(monitor) ? (own(monitor, 'bigip') ?? own(monitor, 'use')) : undefined;
  if (typeof name !== 'string') return 'monitor is not applied';
  const used = isRecord(monitor) && typeof own(monitor, 'use') === 'string' ? resolveMember(name, scope) : undefined;
  const cls = used && classOf(used.member);
  return cls ? `monitor '${clip(name)}' (class ${clip(cls)}) is not applied` : `monitor '${clip(name)}' is not applied`;
}
