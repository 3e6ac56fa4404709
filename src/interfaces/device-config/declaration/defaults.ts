import {
  DECLARATION_PROPERTIES,
  DEFAULT_VIRTUAL_PORT,
  SERVICE_CLASS,
  TENANT_PROPERTIES,
  APPLICATION_PROPERTIES,
  isRecord,
  own,
} from './model.ts';

/**
 * A tenant as the device stores it: as given, with the one default the device applies written in,
 * `virtualPort: 80` on a `Service_HTTP` without one (placed after `virtualAddresses`, as the GET
 * examples show it). Other defaults (`template: generic`, `adminState: enable`, ...) are not added:
 * a GET answers what was declared. Idempotent; the input is not changed: an application that needs no
 * default is the same object (a copy of each would cost this thread ~100 ms for a 2 MiB declaration).
 */
export function tenantWithDefaults(tenant: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const needs = (application: unknown) =>
    isRecord(application) && Object.values(application).some((member) => serviceWithDefaults(member) !== member);
  const changed = Object.entries(tenant).some(([appName, application]) => !TENANT_PROPERTIES.has(appName) && needs(application));
  if (!changed) return tenant as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(tenant).map(([appName, application]) => [
      appName,
      TENANT_PROPERTIES.has(appName) || !isRecord(application) || !needs(application)
        ? application
        : Object.fromEntries(
            Object.entries(application).map(([name, member]) => [
              name,
              APPLICATION_PROPERTIES.has(name) ? member : serviceWithDefaults(member),
            ]),
          ),
    ]),
  );
}

function serviceWithDefaults(member: unknown): unknown {
  if (!isRecord(member) || own(member, 'class') !== SERVICE_CLASS || Object.hasOwn(member, 'virtualPort')) return member;
  const entries = Object.entries(member);
  const after = entries.findIndex(([key]) => key === 'virtualAddresses') + 1 || entries.length;
  return Object.fromEntries([...entries.slice(0, after), ['virtualPort', DEFAULT_VIRTUAL_PORT], ...entries.slice(after)]);
}

/** A declaration with every tenant's defaults written in (see tenantWithDefaults). */
export function declarationWithDefaults<T extends Readonly<Record<string, unknown>>>(declaration: T): T {
  return Object.fromEntries(
    Object.entries(declaration).map(([key, value]) => [
      key,
      DECLARATION_PROPERTIES.has(key) || !isRecord(value) ? value : tenantWithDefaults(value),
    ]),
  ) as T;
}
