import { toPointer } from '../../../lib/contract/json-pointer.ts';
import type { DataGroup } from '../../../traffic/irules/types.ts';
import { DATA_GROUP_CLASS, IRULE_CLASS, POOL_CLASS, applicationsOf, clip, isCommonReference, isRecord, membersOf, own } from './model.ts';
import { classOf, resolveMember, type Scope } from './references.ts';

/** A rule a service runs, in its order: an `iRule` of the tenant (`/T/A/name`), or a script object stored on the device (`{bigip}`). */
export type RuleReference = { path: string; stored?: true };

/** A pool a rule may pick (plan.ts PoolPlan). */
type PoolPlanLike = { key: string; members: { host: string; port: number }[]; monitor: 'http' | null };

/**
 * What the rules of a tenant's services may use, each once per tenant (the deployer gives every
 * service its view): the tenant's `iRule` texts, its pools and its data groups, by path `/T/A/name`.
 */
export type TenantRules = {
  texts: Record<string, string>;
  pools: Record<string, PoolPlanLike>;
  dataGroups: Record<string, DataGroup>;
};

type Member = Readonly<Record<string, unknown>>;

const KEY_TYPES: Readonly<Record<string, DataGroup['type']>> = { string: 'string', integer: 'integer', ip: 'address' };

/** Whitespace a base64 text may hold anywhere (line breaks, as Node's decoder skips them). */
const WHITESPACE = /\s+/g;
/**
 * Base64 once its whitespace is out: padding only at the end. Length is not checked (Node's decoder
 * reads unpadded text too). No class shares a character with the one after it, so it never backtracks.
 */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The text of an `iRule` member (`iRule: "<text>"` or `{base64}`), or why it cannot run here. */
function ruleText(pointer: string, rule: Member): { text: string } | string {
  const body = own(rule, 'iRule');
  if (typeof body === 'string') return { text: body };
  if (isRecord(body) && typeof own(body, 'base64') === 'string') {
    // Whitespace out first (one linear pass), then a pattern with no overlapping repeats: linear too.
    const encoded = (own(body, 'base64') as string).replace(WHITESPACE, '');
    if (!BASE64.test(encoded)) return `${pointer}/iRule/base64: is not base64`;
    return { text: Buffer.from(encoded, 'base64').toString('utf8') };
  }
  if (isRecord(body) && own(body, 'url') !== undefined)
    return `${pointer}/iRule/url: an iRule fetched from a URL is not supported by this device; give its text or base64`;
  return `${pointer}/iRule: should be the rule's text, or {base64}`;
}

/** A `Data_Group` member as the rules' `class match` reads it, or why it cannot. External ones have no records here. */
function dataGroupOf(pointer: string, group: Member): DataGroup | string {
  const keyType = own(group, 'keyDataType') ?? 'string';
  const type = typeof keyType === 'string' ? KEY_TYPES[keyType] : undefined;
  if (!type) return `${pointer}/keyDataType: should be one of string, integer, ip`;
  const records = own(group, 'records') ?? [];
  if (!Array.isArray(records)) return `${pointer}/records: should be a list of {key, value}`;
  const read: { key: string; value: string }[] = [];
  for (const [index, record] of records.entries()) {
    const key = isRecord(record) ? own(record, 'key') : undefined;
    const value = isRecord(record) ? (own(record, 'value') ?? '') : undefined;
    if ((typeof key !== 'string' && typeof key !== 'number') || (typeof value !== 'string' && typeof value !== 'number'))
      return `${pointer}/records/${index}: should be {key, value} with a string or number key`;
    read.push({ key: String(key), value: String(value) });
  }
  return { type, records: read };
}

/**
 * The tenant's iRules, pools and data groups, for its services' rules; a failure message (naming the
 * pointer) when an iRule or a data group cannot be read. `poolPlan` is plan.ts's.
 */
export function tenantRules(
  tenantName: string,
  tenant: Member,
  poolPlan: (key: string, pool: Member) => PoolPlanLike,
): { ok: true; rules: TenantRules } | { ok: false; message: string } {
  const rules: TenantRules = { texts: {}, pools: {}, dataGroups: {} };
  for (const [appName, application] of applicationsOf(tenant)) {
    if (!isRecord(application)) continue;
    for (const [name, member] of membersOf(application)) {
      if (!isRecord(member)) continue;
      const key = toPointer([tenantName, appName, name]);
      const cls = own(member, 'class');
      if (cls === IRULE_CLASS) {
        const text = ruleText(key, member);
        if (typeof text === 'string') return { ok: false, message: text };
        rules.texts[key] = text.text;
      } else if (cls === DATA_GROUP_CLASS && own(member, 'storageType') !== 'external') {
        const group = dataGroupOf(key, member);
        if (typeof group === 'string') return { ok: false, message: group };
        rules.dataGroups[key] = group;
      } else if (cls === POOL_CLASS) {
        rules.pools[key] = poolPlan(key, member);
      }
    }
  }
  return { ok: true, rules };
}

const quoted = (reference: string) => `'${clip(reference)}'`;

/**
 * The rules a service runs, in its order, or the failure message of the first reference that names
 * none: a name or `{use}` must be an `iRule` of the tenant (the same application for a bare name); a
 * `{bigip}` path names a script object stored on the device (/mgmt/tm/traffic/rule), looked up when
 * the tenant is deployed. A `{use}` of `/Common/...` from another tenant is kept and reported, not run.
 */
export function ruleReferences(pointer: string, service: Member, scope: Scope): RuleReference[] | string {
  const list = own(service, 'iRules');
  if (list === undefined) return [];
  if (!Array.isArray(list)) return `${pointer}/iRules: should be a list of iRule references`;
  const references: RuleReference[] = [];
  for (const [index, reference] of list.entries()) {
    const where = `${pointer}/iRules/${index}`;
    const bigip = isRecord(reference) ? own(reference, 'bigip') : undefined;
    if (typeof bigip === 'string') {
      if (!/^\/[^/]+(\/[^/]+){1,2}$/.test(bigip)) return `${where}: ${quoted(bigip)} is not a path /Partition/name`;
      references.push({ path: bigip, stored: true });
      continue;
    }
    const name = isRecord(reference) ? own(reference, 'use') : reference;
    if (typeof name !== 'string') return `${where}: the iRule reference names no iRule`;
    if (isCommonReference(name, scope.tenantName)) continue; // warnings.ts
    const target = resolveMember(name, scope);
    if (!target) return `${where}: iRule ${quoted(name)} does not exist`;
    const cls = classOf(target.member);
    if (cls !== IRULE_CLASS) return `${where}: ${quoted(name)} is not an iRule (class ${clip(cls ?? 'none')})`;
    references.push({ path: target.key });
  }
  return references;
}
