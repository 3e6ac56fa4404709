import { randomUUID } from 'node:crypto';
import { fail, ok, type Result } from '../../lib/errors.ts';
import { invalidRequest } from './appsvcs-outcome.ts';
import type { ServiceDeployError as DeployError } from './appsvcs-patch.ts';
import type { SettingsStore } from './appsvcs-settings.ts';
import { isRecord, own } from './declaration/model.ts';
import { applicationNames, mergeApplications, perAppView, readPerAppBody } from './declaration/per-app.ts';
import type { DeclarativeService } from './declarative-service.ts';
import { type CodedError, codedError } from './device-errors.ts';

export type PerAppDeps = {
  service: Pick<DeclarativeService, 'deploy' | 'tenantDeclaration'>;
  settings: Pick<SettingsStore, 'read'>;
  schemaCurrent: string;
};

type Lookup = CodedError<'tenantNotFound' | 'applicationNotFound' | 'appsvcsRequestRefused'>;
/** An answer as JSON text with its status, or the service's outcome of a deployment. */
export type PerAppAnswer = { status: 200 | 207; text: string };

const DISABLED = 'Error: Per-application deployment has been disabled on the settings endpoint';
const missingApplication = (tenant: string, application: string) =>
  codedError('applicationNotFound', `specified Application '${application}' not found in '${tenant}'`);

/** The declaration's own members as deployed, without `updateMode` (per-application deployments are selective). */
function headerOf(text: string, schemaCurrent: string): Record<string, unknown> {
  const header: Record<string, unknown> = JSON.parse(text);
  if (!Object.hasOwn(header, 'class')) Object.assign(header, { class: 'ADC', schemaVersion: schemaCurrent, id: `autogen_${randomUUID()}` });
  delete header.updateMode;
  return header;
}

/**
 * The per-application API (after the real extension, `/declare/<tenant>/applications[/<application>]`):
 * a tenant's applications read, deployed or removed one by one, the tenant's other applications left as
 * deployed. Every operation is refused (400) while the settings say `perAppDeploymentAllowed: false`. A
 * deployment reads the deployed tenant and deploys the merged one as two steps: a deployment of the same
 * tenant between them is overwritten, as if it had come first.
 */
export function createPerAppOperations(deps: PerAppDeps) {
  const { service } = deps;
  const allowed = async (): Promise<Result<void, Lookup>> =>
    (await deps.settings.read()).perAppDeploymentAllowed ? ok(undefined) : fail(codedError('appsvcsRequestRefused', DISABLED));

  /** The deployed tenant and the declaration's schemaVersion; the service's 404 when it is not deployed. */
  async function deployedTenant(tenant: string): Promise<Result<{ tenant: Record<string, unknown>; schemaVersion: unknown }, Lookup>> {
    const text = await service.tenantDeclaration([tenant]);
    if (!text.ok) return fail(text.error);
    const declaration = JSON.parse(text.value) as Record<string, unknown>;
    const value = own(declaration, tenant);
    return ok({ tenant: isRecord(value) ? value : {}, schemaVersion: own(declaration, 'schemaVersion') });
  }

  async function deployTenant(tenant: string, value: Record<string, unknown>, schemaVersion: string | undefined) {
    const header = await service.tenantDeclaration([]);
    const declaration = headerOf(header.ok ? header.value : '{}', deps.schemaCurrent);
    if (schemaVersion) declaration.schemaVersion = schemaVersion;
    declaration[tenant] = value;
    return service.deploy(Buffer.from(JSON.stringify(declaration)), { updateMode: 'selective' });
  }

  return {
    /** `GET /declare/<tenant>/applications`: every application of the tenant, in per-application form. */
    async list(tenant: string): Promise<Result<string, Lookup>> {
      const gate = await allowed();
      if (!gate.ok) return gate;
      const found = await deployedTenant(tenant);
      return found.ok ? ok(JSON.stringify(perAppView(found.value.schemaVersion, found.value.tenant))) : found;
    },

    /** `GET /declare/<tenant>/applications/<application>`. */
    async get(tenant: string, application: string): Promise<Result<string, Lookup>> {
      const gate = await allowed();
      if (!gate.ok) return gate;
      const found = await deployedTenant(tenant);
      if (!found.ok) return found;
      if (!applicationNames(found.value.tenant).includes(application)) return fail(missingApplication(tenant, application));
      return ok(JSON.stringify(perAppView(found.value.schemaVersion, found.value.tenant, [application])));
    },

    /**
     * `POST /declare/<tenant>/applications`: the posted applications replace or join the tenant's (a new
     * tenant is created); answered like `POST /declare`, its declaration in per-application form.
     */
    async deploy(tenant: string, body: unknown): Promise<Result<PerAppAnswer, CodedError<'appsvcsRequestRefused'> | DeployError>> {
      if (!(await deps.settings.read()).perAppDeploymentAllowed) return fail(codedError('appsvcsRequestRefused', DISABLED));
      const read = readPerAppBody(body);
      if (!read.ok) return fail(invalidRequest(read.errors));
      const found = await deployedTenant(tenant);
      const merged = mergeApplications(found.ok ? found.value.tenant : undefined, read.body);
      const deployed = await deployTenant(tenant, merged, read.body.schemaVersion);
      if (!deployed.ok) return deployed;
      const outcome = deployed.value;
      if (outcome.kind !== 'done' && outcome.kind !== 'partial') throw new Error(`a per-application deployment ended ${outcome.kind}`);
      const answer = JSON.parse(outcome.json) as { declaration?: Record<string, unknown> };
      const after = answer.declaration ?? {};
      const now = own(after, tenant);
      const names = read.body.applications.map(([name]) => name);
      answer.declaration = perAppView(own(after, 'schemaVersion'), isRecord(now) ? now : {}, names);
      return ok({ status: outcome.kind === 'done' ? 200 : 207, text: JSON.stringify(answer) });
    },

    /** `DELETE /declare/<tenant>/applications/<application>`: the tenant deployed again without it (its last one: removed). */
    async remove(tenant: string, application: string): Promise<Result<string, Lookup | DeployError>> {
      const gate = await allowed();
      if (!gate.ok) return gate;
      const found = await deployedTenant(tenant);
      if (!found.ok) return found;
      if (!applicationNames(found.value.tenant).includes(application)) return fail(missingApplication(tenant, application));
      const rest = Object.fromEntries(Object.entries(found.value.tenant).filter(([name]) => name !== application));
      const deployed = await deployTenant(tenant, rest, undefined);
      if (!deployed.ok) return deployed;
      if (deployed.value.kind !== 'done' && deployed.value.kind !== 'partial') throw new Error(`a removal ended ${deployed.value.kind}`);
      return ok(deployed.value.json);
    },
  };
}

export type PerAppOperations = ReturnType<typeof createPerAppOperations>;
