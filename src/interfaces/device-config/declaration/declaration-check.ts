import type { ValidateFunction } from 'ajv';
import { escapeSegment } from '../../../lib/contract/json-pointer.ts';
import {
  APPLICATION_PROPERTIES,
  DECLARATION_PROPERTIES,
  POOL_CLASS,
  SERVICE_CLASS,
  TENANT_PROPERTIES,
  applicationsOf,
  clip,
  isRecord,
  membersOf,
  own,
  pick,
} from './model.ts';
import { schemaMessage, schemaProblems } from './schema-messages.ts';

/** The spec's schema at a JSON pointer (createSpecValidator(document).at). */
export type SchemaAt = (pointer: string) => ValidateFunction;
/** The range of `schemaVersion` the device accepts (`/info`). */
export type SchemaRange = { schemaMinimum: string; schemaCurrent: string };
/** Receives each problem: a JSON pointer and a message. */
export type Report = (pointer: string, message: string) => void;

const schema = (name: string) => `/components/schemas/${name}`;

/** The schema a member is judged by: its class chooses (spec: ApplicationMember). */
const memberSchema = (member: unknown) => {
  const cls = isRecord(member) ? own(member, 'class') : undefined;
  return cls === SERVICE_CLASS ? 'Service' : cls === POOL_CLASS ? 'Pool' : 'UnmodelledMember';
};

/** `a.b.c` as numbers; undefined when it is not three numbers. */
const versionOf = (text: string) => (/^[0-9]+\.[0-9]+\.[0-9]+$/.test(text) ? text.split('.').map(Number) : undefined);
const compareVersions = (a: number[], b: number[]) => a.map((n, i) => n - b[i]!).find((d) => d !== 0) ?? 0;

/**
 * Checks a declaration level by level, each level against its own schema without its children
 * (the declaration without its tenants, each tenant without its applications, ...), so that a
 * problem is reported once, at its own pointer, in the real product's words, instead of as the
 * failure of every `oneOf` above it. Pointers are relative to the declaration.
 */
export function checkDeclaration(declaration: unknown, schemaAt: SchemaAt, range: SchemaRange, report: Report): void {
  const validate = (pointer: string, name: string, value: unknown) => {
    const fn = schemaAt(schema(name));
    if (fn(value)) return;
    for (const problem of schemaProblems(fn.errors ?? [])) report(pointer + problem.instancePath, problem.message);
  };
  /** Whether a member's name is valid; an invalid one is reported once and not descended into (its name would lead every pointer below). */
  const checkName = (pointer: string, key: string, level: string) => {
    const fn = schemaAt(`${schema(level)}/propertyNames`);
    if (fn(key)) return true;
    for (const error of fn.errors ?? []) report(pointer, `propertyName ${JSON.stringify(clip(key))} ${schemaMessage(error)}`);
    return false;
  };
  const at = (pointer: string, key: string) => `${pointer}/${escapeSegment(key)}`;

  validate('', 'Declaration', isRecord(declaration) ? pick(declaration, DECLARATION_PROPERTIES) : declaration);
  if (!isRecord(declaration)) return;
  checkSchemaVersion(own(declaration, 'schemaVersion'), range, report);

  for (const [tenantName, tenant] of Object.entries(declaration).filter(([key]) => !DECLARATION_PROPERTIES.has(key))) {
    if (!checkName('', tenantName, 'Declaration')) continue;
    const tenantPointer = at('', tenantName);
    validate(tenantPointer, 'Tenant', isRecord(tenant) ? pick(tenant, TENANT_PROPERTIES) : tenant);
    if (!isRecord(tenant)) continue;
    for (const [appName, application] of applicationsOf(tenant)) {
      if (!checkName(tenantPointer, appName, 'Tenant')) continue;
      const appPointer = at(tenantPointer, appName);
      validate(appPointer, 'Application', isRecord(application) ? pick(application, APPLICATION_PROPERTIES) : application);
      if (!isRecord(application)) continue;
      for (const [memberName, member] of membersOf(application)) {
        if (!checkName(appPointer, memberName, 'Application')) continue;
        const memberPointer = at(appPointer, memberName);
        validate(memberPointer, memberSchema(member), boundedForSchema(member));
        for (const [index, poolMember] of poolMembersOf(member))
          validate(`${memberPointer}/members/${index}`, 'PoolMember', boundedPoolMember(poolMember));
      }
    }
  }
}

/** `schemaVersion` must lie in the device's range (checked only once it matches the schema's pattern). */
function checkSchemaVersion(value: unknown, range: SchemaRange, report: Report) {
  const version = typeof value === 'string' && /^3\.[0-9]+\.[0-9]+$/.test(value) ? versionOf(value) : undefined;
  const [minimum, current] = [versionOf(range.schemaMinimum), versionOf(range.schemaCurrent)];
  if (!version || !minimum || !current) return;
  if (compareVersions(version, minimum) < 0 || compareVersions(version, current) > 0) {
    report('/schemaVersion', `should be equal to one of the supported schema versions (${range.schemaMinimum} to ${range.schemaCurrent})`);
  }
}

/** Longer than any address may be (IpAddress maxLength 64): refused for its length whatever else it holds. */
const ADDRESS_BOUND = 65;
/** One item past each list's `maxItems` in the spec (Service, Pool, PoolMember, VirtualAddress): still refused for its length. */
const LIST_BOUND = { virtualAddresses: 17, addressPair: 3, monitors: 9, members: 257, serverAddresses: 257 } as const;

const cutString = (value: unknown) => (typeof value === 'string' && value.length > ADDRESS_BOUND ? value.slice(0, ADDRESS_BOUND) : value);
/** A list cut one item past its bound, each item mapped; anything else as it is. */
const cutList = (list: unknown, bound: number, item: (value: unknown) => unknown = (value) => value) =>
  Array.isArray(list) ? list.slice(0, bound).map(item) : list;
const withList = (record: Readonly<Record<string, unknown>>, key: string, bound: number, item?: (value: unknown) => unknown) =>
  Object.hasOwn(record, key) ? { ...record, [key]: cutList(record[key], bound, item) } : record;

/** A pool member any PoolMember accepts: stands in for each member object while the pool is validated. */
const POOL_MEMBER_STAND_IN = { servicePort: 0, serverAddresses: ['127.0.0.1'] };

const boundedPoolMember = (value: unknown) =>
  isRecord(value) ? withList(value, 'serverAddresses', LIST_BOUND.serverAddresses, cutString) : value;

/** The member objects of a pool (within its bound), each validated on its own against PoolMember. */
function poolMembersOf(member: unknown): [number, Record<string, unknown>][] {
  const members = isRecord(member) && own(member, 'class') === POOL_CLASS ? own(member, 'members') : undefined;
  if (!Array.isArray(members)) return [];
  return members
    .slice(0, LIST_BOUND.members)
    .flatMap((value, index): [number, Record<string, unknown>][] => (isRecord(value) ? [[index, value]] : []));
}

/**
 * The copy of a member the schema check reads, so that its cost is bounded whatever the member holds:
 * every list cut one item past its `maxItems` (a longer list is still refused, and every pointer kept),
 * address strings cut to 65 characters, and a pool's member objects replaced by a stand-in (each is
 * validated on its own, poolMembersOf). Because ajv (allErrors) copies the errors of each `$ref`'d item
 * into the list's, quadratic in the items (650 000 bad pool members took minutes), and the spec's IPv6
 * pattern backtracks quadratically (a megabyte of `:` would take hours), while an address that long is
 * refused for its length anyway. Only the copy validated is cut; the declaration is not.
 */
function boundedForSchema(member: unknown): unknown {
  if (!isRecord(member)) return member;
  const cls = own(member, 'class');
  if (cls === SERVICE_CLASS) {
    const address = (value: unknown) => (Array.isArray(value) ? cutList(value, LIST_BOUND.addressPair, cutString) : cutString(value));
    return withList(member, 'virtualAddresses', LIST_BOUND.virtualAddresses, address);
  }
  if (cls !== POOL_CLASS) return member;
  const standIn = (value: unknown) => (isRecord(value) ? POOL_MEMBER_STAND_IN : value);
  return withList(withList(member, 'monitors', LIST_BOUND.monitors), 'members', LIST_BOUND.members, standIn);
}
