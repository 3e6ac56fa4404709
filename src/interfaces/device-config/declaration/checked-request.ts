import type { SchemaAt, SchemaRange } from './declaration-check.ts';
import { fingerprintOf } from './fingerprint.ts';
import { isRecord, own } from './model.ts';
import { planTenant, type TenantPlan } from './plan.ts';
import { readDeployRequest, type DeployRequest } from './request.ts';

/** A tenant's plan without its declaration (the caller holds that; its fingerprint stands for it), or why it fails. */
export type PlanOutcome = { ok: true; plan: Omit<TenantPlan, 'declaration'> & { fingerprint: string } } | { ok: false; message: string };

/**
 * A deployment request checked and planned: every problem of the body, or the request without its
 * declaration (the caller has the body already; a copy of megabytes is not sent between threads) and
 * the outcome of planning each tenant it deploys. What is sent back is small whatever the body.
 */
export type CheckedRequest =
  | { ok: false; errors: string[] }
  | { ok: true; request: Omit<DeployRequest, 'declaration'>; plans: [tenant: string, outcome: PlanOutcome][] };

/** A tenant the deployment replaces (one with applications; one without is removed and needs no plan). */
const isDeployedTenant = (value: unknown): value is Record<string, unknown> =>
  isRecord(value) && own(value, 'class') === 'Tenant' && Object.values(value).some((v) => isRecord(v) && own(v, 'class') === 'Application');

/**
 * Reads a `POST /declare` body (request.ts) and plans each tenant it declares (plan.ts): all the work
 * that grows with the body, so that it can run on a worker thread (declaration-checker.ts). Plans
 * need nothing of what is deployed (a tenant's references stay within it), so they can be made here.
 *
 * @example
 * const checked = checkDeployRequest(body, schemaAt, { schemaMinimum: '3.0.0', schemaCurrent: '3.50.0' }, {});
 * if (checked.ok) for (const [tenant, outcome] of checked.plans) console.log(tenant, outcome.ok);
 */
export function checkDeployRequest(body: unknown, schemaAt: SchemaAt, info: SchemaRange, query: { updateMode?: DeployRequest['updateMode'] }): CheckedRequest {
  const read = readDeployRequest(body, schemaAt, info, query);
  if (!read.ok) return read;
  const { declaration, ...request } = read.request;
  const plans: [string, PlanOutcome][] = [];
  if (declaration && (request.action === 'deploy' || request.action === 'dry-run')) {
    for (const [tenant, value] of Object.entries(declaration)) {
      if (!isDeployedTenant(value)) continue;
      const planned = planTenant(tenant, value);
      plans.push([tenant, planned.ok ? { ok: true, plan: withoutDeclaration(planned.plan) } : planned]);
    }
  }
  return { ok: true, request, plans };
}

const withoutDeclaration = ({ declaration, ...plan }: TenantPlan) => ({ ...plan, fingerprint: fingerprintOf(declaration) });
