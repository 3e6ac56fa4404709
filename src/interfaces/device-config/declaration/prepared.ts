import { fingerprintOf } from './fingerprint.ts';
import { isRecord, own } from './model.ts';
import { tenantWithDefaults } from './defaults.ts';
import { planTenant, type TenantPlan } from './plan.ts';

/** A tenant's plan without its declaration (its text and its fingerprint stand for it). */
export type PlanSummary = Omit<TenantPlan, 'declaration' | 'fingerprint'> & { fingerprint: string };

/**
 * One tenant of a declaration as the device stores it (`text`: JSON with its defaults written in,
 * defaults.ts) and what deploying it means: `remove` (it has no applications), its `plan`, or why it
 * `failed` to plan.
 */
export type PreparedTenant =
  | { kind: 'remove'; text: string }
  | { kind: 'plan'; text: string; plan: PlanSummary }
  | { kind: 'failed'; text: string; message: string };

/**
 * A declaration ready to deploy, as JSON texts: its own members (`class`, `schemaVersion`, ...) and
 * its tenants, in the declaration's order. Made where the declaration was parsed (the checker's
 * thread for a large one): what crosses to the event loop is strings and small plans, never objects
 * that would have to be walked there.
 */
export type PreparedDeclaration = { header: [key: string, text: string][]; tenants: [name: string, tenant: PreparedTenant][] };

const isTenant = (value: unknown): value is Record<string, unknown> => isRecord(value) && own(value, 'class') === 'Tenant';
const hasApplications = (tenant: Readonly<Record<string, unknown>>) =>
  Object.values(tenant).some((v) => isRecord(v) && own(v, 'class') === 'Application');

/**
 * Splits a (checked, or saved) declaration into its members and its tenants, each tenant planned.
 *
 * @example
 * const prepared = prepareDeclaration({ class: 'ADC', schemaVersion: '3.0.0', T: { class: 'Tenant' } });
 * prepared.tenants[0][1].kind; // 'remove'
 */
export function prepareDeclaration(declaration: Readonly<Record<string, unknown>>): PreparedDeclaration {
  const prepared: PreparedDeclaration = { header: [], tenants: [] };
  for (const [key, value] of Object.entries(declaration)) {
    if (!isTenant(value)) {
      prepared.header.push([key, JSON.stringify(value)]);
      continue;
    }
    const stored = tenantWithDefaults(value);
    const text = JSON.stringify(stored);
    if (!hasApplications(stored)) {
      prepared.tenants.push([key, { kind: 'remove', text }]);
      continue;
    }
    const planned = planTenant(key, stored);
    if (!planned.ok) {
      prepared.tenants.push([key, { kind: 'failed', text, message: planned.message }]);
      continue;
    }
    const { declaration: _, fingerprint: __, ...plan } = planned.plan;
    prepared.tenants.push([key, { kind: 'plan', text, plan: { ...plan, fingerprint: fingerprintOf(stored) } }]);
  }
  return prepared;
}
