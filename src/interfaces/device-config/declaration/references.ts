import { toPointer } from '../../../lib/contract/json-pointer.ts';
import { APPLICATION_PROPERTIES, TENANT_PROPERTIES, isRecord, own } from './model.ts';

/** Where a reference is read: the tenant (of this declaration) and the application it is written in. */
export type Scope = { tenantName: string; tenant: Readonly<Record<string, unknown>>; appName: string };

/** A member a reference names: its path `/T/A/name` and its declaration. */
export type Target = { key: string; member: unknown };

/**
 * The member a `pool`, `{use}` or monitor reference names: a bare name is a member of the same
 * application; a path `/T/A/name` a member of an application of the same tenant. Other tenants (even
 * deployed ones) are out of reach: a tenant is deployed, replaced and removed whole. Undefined when
 * nothing is there (application settings such as `template` are not members).
 */
export function resolveMember(reference: string, scope: Scope): Target | undefined {
  const parts = reference.startsWith('/') ? reference.split('/') : ['', scope.tenantName, scope.appName, reference];
  if (parts.length !== 4 || parts[1] !== scope.tenantName) return undefined;
  const [, , appName = '', name = ''] = parts;
  const application = TENANT_PROPERTIES.has(appName) ? undefined : own(scope.tenant, appName);
  if (!isRecord(application) || APPLICATION_PROPERTIES.has(name) || !Object.hasOwn(application, name)) return undefined;
  return { key: toPointer([scope.tenantName, appName, name]), member: application[name] };
}

/** The class of a member, or undefined. */
export const classOf = (member: unknown): string | undefined => {
  const cls = isRecord(member) ? own(member, 'class') : undefined;
  return typeof cls === 'string' ? cls : undefined;
};
