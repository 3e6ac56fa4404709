import { toPointer } from '../../lib/contract/json-pointer.ts';
import { fail, type Result } from '../../lib/errors.ts';
import { type DeployOutcome, invalidRequest } from './appsvcs-outcome.ts';
import type { SchemaAt } from './declaration/declaration-check.ts';
import { findTooDeep } from './declaration/depth.ts';
import { applyPatch, type PatchOperation, parsePointer } from './declaration/json-patch.ts';
import { DECLARATION_PROPERTIES, isRecord, own } from './declaration/model.ts';
import { MAX_DEPTH } from './declaration/request.ts';
import { schemaProblems } from './declaration/schema-messages.ts';
import type { DeclarativeService } from './declarative-service.ts';

/** Every failure of the service's deployment (a refused request, busy, a standby process, ...). */
export type ServiceDeployError = Extract<Awaited<ReturnType<DeclarativeService['deploy']>>, { ok: false }>['error'];
import { codedError } from './device-errors.ts';

/** What a patch needs of the device: the deployed declaration by tenant, and a deployment. */
export type PatchDeps = {
  service: Pick<DeclarativeService, 'deploy' | 'tenantDeclaration' | 'declaration'>;
  schemas: () => Promise<SchemaAt>;
  schemaCurrent: string;
};

const refused = (message: string) => fail(codedError('declarationInvalid', message));
const tooDeep = (path: (string | number)[]) =>
  fail(invalidRequest([`${toPointer(path.slice(0, 4))}: should NOT be nested more than ${MAX_DEPTH} levels deep`]));

/** The operations of a patch body (a list, or one operation alone), or every problem of its shape. */
function operationsOf(body: unknown, schemaAt: SchemaAt): { ok: true; operations: PatchOperation[] } | { ok: false; errors: string[] } {
  const validate = schemaAt('/components/schemas/DeclarationPatch');
  if (!validate(body))
    return {
      ok: false,
      errors: schemaProblems(validate.errors ?? [])
        .map((p) => `${p.instancePath}: ${p.message}`)
        .slice(0, 100),
    };
  const operations = (Array.isArray(body) ? body : [body]) as PatchOperation[];
  const errors: string[] = [];
  operations.forEach((operation, index) => {
    const needs =
      operation.op === 'add' || operation.op === 'replace'
        ? 'value'
        : operation.op === 'move' || operation.op === 'copy'
          ? 'from'
          : undefined;
    if (needs && !Object.hasOwn(operation, needs)) errors.push(`/${index}: should have required property '${needs}'`);
  });
  return errors.length > 0 ? { ok: false, errors: errors.slice(0, 100) } : { ok: true, operations };
}

/** Distinct tenants one patch may name (a patch of more is refused before any tenant is read). */
export const MAX_PATCHED_TENANTS = 100;

/** The tenants a patch's pointers name (their first token, when it is not a member of the declaration itself). */
function tenantsNamed(operations: readonly PatchOperation[]): string[] {
  const named = new Set<string>();
  for (const operation of operations)
    for (const pointer of [operation.path, operation.from]) {
      const first = pointer === undefined ? undefined : parsePointer(pointer)?.[0];
      if (first && !DECLARATION_PROPERTIES.has(first)) named.add(first);
    }
  return [...named];
}

/**
 * The named tenants that are deployed, by name, in one read: the named ones together, or (when one of
 * them is not deployed: a patch may add a tenant) the whole declaration, picked from (less the members
 * of its `header`, the declaration's own).
 */
async function deployedTenants(
  service: PatchDeps['service'],
  names: readonly string[],
  header: Readonly<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  if (names.length === 0) return {};
  const together = await service.tenantDeclaration(names);
  const text = together.ok ? together.value : await service.declaration();
  const declaration: unknown = text === undefined ? {} : JSON.parse(text);
  const found: Record<string, unknown> = {};
  for (const name of names)
    if (isRecord(declaration) && Object.hasOwn(declaration, name) && !Object.hasOwn(header, name))
      Object.defineProperty(found, name, { value: declaration[name], enumerable: true, writable: true, configurable: true });
  return found;
}

/**
 * `PATCH /declare` (after the real extension): the patch applies to the declaration's own members and
 * to the deployed tenants its paths name, and the result is deployed as a `selective` deployment of those
 * tenants (a named tenant the patch removes is removed). Refused (422, nothing changed): `test`, an
 * `updateMode` other than `selective`, an operation that cannot apply, a body of the wrong shape, a patch
 * naming more than 100 tenants (they are read before any operation is checked). The deployed tenants
 * are read and the result deployed as two steps: a deployment between them is overwritten by the
 * patched tenant, as if it had come first.
 */
export async function patchDeclaration(deps: PatchDeps, body: unknown): Promise<Result<DeployOutcome, ServiceDeployError>> {
  const deep = findTooDeep(body, MAX_DEPTH);
  if (deep) return tooDeep(deep);
  const read = operationsOf(body, await deps.schemas());
  if (!read.ok) return fail(invalidRequest(read.errors));
  const { operations } = read;
  if (operations.some((o) => o.op === 'test')) return refused("invalid patch - op 'test' is not supported");
  if (operations.some((o) => o.path === '/updateMode' && o.value !== 'selective'))
    return refused("invalid patch - updateMode value can only be 'selective'");

  const named = tenantsNamed(operations);
  if (named.length > MAX_PATCHED_TENANTS)
    return refused(`invalid patch - names ${named.length} tenants; at most ${MAX_PATCHED_TENANTS} may be patched at once`);

  // The declaration's own members as deployed (`{}` when nothing ever was), then the named tenants deployed.
  const header = await deps.service.tenantDeclaration([]);
  const base: Record<string, unknown> = header.ok ? JSON.parse(header.value) : {};
  const found = await deployedTenants(deps.service, named, base);
  if (!Object.hasOwn(base, 'class')) Object.assign(base, { class: 'ADC', schemaVersion: deps.schemaCurrent });
  delete base.updateMode;
  const deployed: string[] = [];
  for (const tenant of named) {
    if (!Object.hasOwn(found, tenant)) continue;
    Object.defineProperty(base, tenant, { value: found[tenant], enumerable: true, writable: true, configurable: true });
    deployed.push(tenant);
  }

  const patched = applyPatch(base, operations);
  if (!patched.ok) return refused(patched.message);
  const declaration = patched.document;
  if (!isRecord(declaration)) return fail(invalidRequest([': should be object']));
  // A deployed tenant the patch took out of the declaration is removed, not left as it was.
  for (const tenant of deployed) if (!isRecord(own(declaration, tenant))) declaration[tenant] = { class: 'Tenant' };
  const deepResult = findTooDeep(declaration, MAX_DEPTH);
  if (deepResult) return tooDeep(deepResult);
  return deps.service.deploy(Buffer.from(JSON.stringify(declaration)), { updateMode: 'selective' });
}
