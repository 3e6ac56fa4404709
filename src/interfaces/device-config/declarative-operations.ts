import { type Applied, invalidRequest, malformedRequest, type OperationOutcome as Outcome, type RequestError } from './appsvcs-outcome.ts';
import type { CheckedRequest, ReadyRequest } from './declaration/checked-request.ts';
import type { DeclarationChecker } from './declaration/declaration-checker.ts';
import type { PreparedDeclaration, PreparedTenant } from './declaration/prepared.ts';
import type { DeclarationStore } from './declaration-store.ts';
import type { HeaderMembers, TenantDeployer } from './tenant-deployer.ts';

/**
 * One configuration operation. `request`: checked and prepared, or (a queued deployment, run from its saved
 * text) checked again when it runs.
 */
export type OperationTask = {
  id: string;
  order: number;
  request: ReadyRequest | { action: 'remove-tenants'; tenants: string[] } | { action: 'stored'; text: string };
};

/** The refusal of the checker's answer (the body is not JSON, or not a valid request), or undefined. */
export const refusalOf = (checked: CheckedRequest): RequestError | undefined =>
  checked.ok ? undefined : 'malformed' in checked ? malformedRequest() : invalidRequest(checked.errors);

/**
 * What one operation does to the deployed tenants (deploy, dry run, remove, redeploy, retrieve), as an
 * outcome; the caller holds the declarative service's lock.
 */
export function createOperationRunner(deps: {
  checker: Pick<DeclarationChecker, 'checkStored' | 'prepare'>;
  tenants: TenantDeployer;
  store: DeclarationStore;
  schemaCurrent: string;
}) {
  const { checker, tenants, store } = deps;
  const applied = async (done: Promise<Applied>): Promise<Outcome> => ({ kind: 'applied', applied: await done });
  const emptyHeader = (): HeaderMembers =>
    tenants.header() ?? [
      ['class', '"ADC"'],
      ['schemaVersion', JSON.stringify(deps.schemaCurrent)],
    ];
  /** The deployed declaration as text; undefined when no tenant is deployed. */
  const deployedDeclaration = () => (tenants.tenants().length === 0 ? undefined : tenants.declarationOf());

  async function execute({ request }: OperationTask): Promise<Outcome> {
    switch (request.action) {
      case 'stored': {
        const checked = await checker.checkStored(request.text);
        const refused = refusalOf(checked);
        if (refused) return { kind: 'refused', error: refused };
        return execute({ id: '', order: 0, request: (checked as { request: ReadyRequest }).request });
      }
      case 'remove-tenants':
        return applied(
          tenants.apply(
            request.tenants.map((t): [string, null] => [t, null]),
            emptyHeader(),
            true,
            false,
          ),
        );
      case 'retrieve':
        return { kind: 'retrieved', declaration: deployedDeclaration() };
      case 'redeploy': {
        const previous = await store.history(request.redeployAge);
        const prepared = previous === undefined ? undefined : await checker.prepare(previous);
        if (!prepared?.ok)
          return { kind: 'refused', error: invalidRequest([`/redeployAge: no saved declaration ${request.redeployAge} deployments ago`]) };
        return applied(deploy(prepared.declaration, request.persist, false, 'selective'));
      }
      case 'remove':
        return applied(
          tenants.apply(
            request.declaration!.tenants.map(([t]): [string, null] => [t, null]),
            emptyHeader(),
            request.persist,
            request.dryRun,
          ),
        );
      default:
        return applied(deploy(request.declaration!, request.persist, request.dryRun || request.action === 'dry-run', request.updateMode));
    }
  }

  function deploy(declaration: PreparedDeclaration, persist: boolean, dryRun: boolean, updateMode: 'selective' | 'complete') {
    const named: [string, PreparedTenant | null][] = [...declaration.tenants];
    if (updateMode === 'complete') {
      const declared = new Set(named.map(([name]) => name));
      for (const tenant of tenants.tenants()) if (!declared.has(tenant)) named.push([tenant, null]);
    }
    const header: HeaderMembers = [
      ...declaration.header.filter(([key]) => key !== 'updateMode'),
      ['updateMode', JSON.stringify(updateMode)],
    ];
    return tenants.apply(named, header, persist, dryRun);
  }

  return execute;
}
