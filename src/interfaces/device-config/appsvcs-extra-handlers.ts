import type * as F from '../../../generated/device-config/types.gen.ts';
import { refusal, type TypedHandler } from '../../server/handler-types.ts';
import { patchDeclaration, type PatchDeps } from './appsvcs-patch.ts';
import type { PerAppOperations } from './appsvcs-per-app.ts';
import { settingsChanges, type SettingsStore } from './appsvcs-settings.ts';
import type { SchemaAt } from './declaration/declaration-check.ts';

/** JSON text the operations made already, written as its bytes (the role app checks it as `T` in tests). */
const written = <T>(text: string) => ({ body: Buffer.from(text) as unknown as T, contentType: 'application/json' });

export type AppsvcsExtraDeps = PatchDeps & { perApp: PerAppOperations; settings: SettingsStore; schemas: () => Promise<SchemaAt> };

/**
 * The declarative deployment's further operations (designed after the real extension): `PATCH /declare`
 * (JSON Patch), the per-application API and `/settings`. Thin: the work is in appsvcs-patch.ts,
 * appsvcs-per-app.ts and appsvcs-settings.ts.
 */
export function createAppsvcsExtraHandlers(deps: AppsvcsExtraDeps) {
  const { perApp } = deps;

  const patchDeclarationHandler: TypedHandler<F.PatchDeclarationData, F.PatchDeclarationResponses, F.PatchDeclarationErrors> = async ({
    body,
  }) => {
    const patched = await patchDeclaration(deps, body);
    if (!patched.ok) return refusal(patched.error);
    const outcome = patched.value;
    // A patch deploys synchronously and always names a declaration: only `done` and `partial` come back.
    if (outcome.kind === 'done') return { status: 200, ...written<F.DeployResponse>(outcome.json) };
    if (outcome.kind === 'partial') return { status: 207, ...written<F.DeployResponse>(outcome.json) };
    throw new Error(`a patch deployment ended ${outcome.kind}`);
  };

  const listApplications: TypedHandler<F.ListApplicationsData, F.ListApplicationsResponses, F.ListApplicationsErrors> = async ({
    params,
  }) => {
    const listed = await perApp.list(params.tenant);
    return listed.ok ? { status: 200, ...written<F.PerAppDeclaration>(listed.value) } : refusal(listed.error);
  };

  const getApplication: TypedHandler<F.GetApplicationData, F.GetApplicationResponses, F.GetApplicationErrors> = async ({ params }) => {
    const found = await perApp.get(params.tenant, params.application);
    return found.ok ? { status: 200, ...written<F.PerAppDeclaration>(found.value) } : refusal(found.error);
  };

  const deployApplications: TypedHandler<F.DeployApplicationsData, F.DeployApplicationsResponses, F.DeployApplicationsErrors> = async ({
    params,
    body,
  }) => {
    const deployed = await perApp.deploy(params.tenant, body);
    if (!deployed.ok) return refusal(deployed.error);
    return { status: 200, ...written<F.PerAppDeployResponse>(deployed.value.text) };
  };

  const deleteApplication: TypedHandler<F.DeleteApplicationData, F.DeleteApplicationResponses, F.DeleteApplicationErrors> = async ({
    params,
  }) => {
    const removed = await perApp.remove(params.tenant, params.application);
    return removed.ok ? { status: 200, ...written<F.DeployResponse>(removed.value) } : refusal(removed.error);
  };

  const getDeploySettings: TypedHandler<F.GetDeploySettingsData, F.GetDeploySettingsResponses, F.GetDeploySettingsErrors> = async () => ({
    status: 200,
    body: await deps.settings.read(),
  });

  const updateDeploySettings: TypedHandler<
    F.UpdateDeploySettingsData,
    F.UpdateDeploySettingsResponses,
    F.UpdateDeploySettingsErrors
  > = async ({ body }) => {
    const changes = settingsChanges(body, await deps.schemas());
    if (!changes.ok) return refusal(changes.error);
    return { status: 200, body: await deps.settings.save(changes.value) };
  };

  return {
    patchDeclaration: patchDeclarationHandler,
    listApplications,
    getApplication,
    deployApplications,
    deleteApplication,
    getDeploySettings,
    updateDeploySettings,
  };
}
