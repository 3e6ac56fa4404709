import { escapeSegment } from '../../../lib/contract/json-pointer.ts';
import { clip, isRecord, own } from './model.ts';

const isApplication = (value: unknown): value is Record<string, unknown> => isRecord(value) && own(value, 'class') === 'Application';

/** A per-application body read: its applications in order, and its own settings. */
export type PerAppBody = {
  applications: [name: string, application: Record<string, unknown>][];
  schemaVersion?: string;
  controls?: unknown;
};

/**
 * Reads a per-application declaration (`POST /declare/<tenant>/applications`, after the real extension):
 * `schemaVersion`, `controls`, and applications (class `Application`). Anything else, or no application,
 * is a problem (`"<pointer>: <message>"`, at most 100). The applications themselves are checked later,
 * in the tenant they are deployed into.
 *
 * @example
 * readPerAppBody({ schemaVersion: '3.56.0', A1: { class: 'Application' } }); // { ok: true, body: { applications: [['A1', ...]], ... } }
 */
export function readPerAppBody(body: unknown): { ok: true; body: PerAppBody } | { ok: false; errors: string[] } {
  if (!isRecord(body)) return { ok: false, errors: [': should be object'] };
  const errors: string[] = [];
  const read: PerAppBody = { applications: [] };
  for (const [key, value] of Object.entries(body)) {
    if (key === 'schemaVersion') {
      if (typeof value === 'string') read.schemaVersion = value;
      else errors.push('/schemaVersion: should be string');
    } else if (key === 'controls') read.controls = value;
    else if (isApplication(value)) read.applications.push([key, value]);
    else errors.push(`/${clip(escapeSegment(key))}: should be an Application (class Application)`);
  }
  if (errors.length === 0 && read.applications.length === 0) errors.push('Per-app declaration must contain at least one application');
  return errors.length > 0 ? { ok: false, errors: errors.slice(0, 100) } : { ok: true, body: read };
}

/**
 * The tenant to deploy: as deployed (a new one when undefined), its applications of the posted names
 * replaced or added, the others as they are; the body's `controls` become the tenant's (as the real
 * extension copies them).
 */
export function mergeApplications(deployed: Readonly<Record<string, unknown>> | undefined, body: PerAppBody): Record<string, unknown> {
  const tenant: Record<string, unknown> = { class: 'Tenant' };
  for (const [key, value] of Object.entries(deployed ?? {}))
    Object.defineProperty(tenant, key, { value, enumerable: true, writable: true, configurable: true });
  if (body.controls !== undefined) tenant.controls = body.controls;
  for (const [name, application] of body.applications)
    Object.defineProperty(tenant, name, { value: application, enumerable: true, writable: true, configurable: true });
  return tenant;
}

/** The per-application form of a tenant: `schemaVersion` and its applications (those named, when names are given). */
export function perAppView(
  schemaVersion: unknown,
  tenant: Readonly<Record<string, unknown>>,
  names?: readonly string[],
): Record<string, unknown> {
  const view: Record<string, unknown> = typeof schemaVersion === 'string' ? { schemaVersion } : {};
  const chosen = names ?? Object.keys(tenant);
  for (const name of chosen) {
    const application = own(tenant, name);
    if (isApplication(application))
      Object.defineProperty(view, name, { value: application, enumerable: true, writable: true, configurable: true });
  }
  return view;
}

/** The names of a tenant's applications. */
export const applicationNames = (tenant: Readonly<Record<string, unknown>>): string[] =>
  Object.entries(tenant)
    .filter(([, value]) => isApplication(value))
    .map(([name]) => name);
