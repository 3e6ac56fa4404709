import type { ValidateFunction } from 'ajv';
import { escapeSegment } from '../../../lib/contract/json-pointer.ts';
import {
  APPLICATION_PROPERTIES, DECLARATION_PROPERTIES, POOL_CLASS, SERVICE_CLASS, TENANT_PROPERTIES,
  applicationsOf, clip, isRecord, membersOf, own, pick,
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
        validate(at(appPointer, memberName), memberSchema(member), withBoundedAddresses(member));
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
const bound = (list: unknown) =>
  Array.isArray(list) && list.some((a) => typeof a === 'string' && a.length > ADDRESS_BOUND)
    ? list.map((a) => (typeof a === 'string' ? a.slice(0, ADDRESS_BOUND) : a))
    : list;

/**
 * A member whose address strings are cut to 65 characters for the schema check: the spec's IPv6
 * pattern backtracks quadratically (a megabyte of `:` would take hours), and an address that long
 * is refused for its length anyway. Only the copy validated is cut; the declaration is not.
 */
function withBoundedAddresses(member: unknown): unknown {
  if (!isRecord(member)) return member;
  const cls = own(member, 'class');
  if (cls === SERVICE_CLASS) return Object.hasOwn(member, 'virtualAddresses') ? { ...member, virtualAddresses: bound(member.virtualAddresses) } : member;
  const members = own(member, 'members');
  if (cls !== POOL_CLASS || !Array.isArray(members)) return member;
  return { ...member, members: members.map((m) => (isRecord(m) && Object.hasOwn(m, 'serverAddresses') ? { ...m, serverAddresses: bound(m.serverAddresses) } : m)) };
}
