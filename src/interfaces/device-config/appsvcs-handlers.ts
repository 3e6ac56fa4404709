import type * as F from '../../../generated/device-config/types.gen.ts';
import { refusal, type TypedHandler } from '../../server/handler-types.ts';
import { deployList, isListBody, listFailure, listText } from './appsvcs-multi.ts';
import type { DeclarativeService, DeployOutcome } from './declarative-service.ts';

/**
 * JSON text the service has already (a declaration, a task record), written as its bytes: never parsed
 * or serialised again here. `T` is the spec's body type the text spells; the role app checks the bytes
 * as that value when it checks responses (tests).
 */
const written = <T>(text: string) => ({ body: Buffer.from(text) as unknown as T, contentType: 'application/json' });

/** A deployment's status by what it did: queued 202, every tenant 200, some 207, nothing to retrieve 204. */
function deployAnswer(outcome: DeployOutcome) {
  switch (outcome.kind) {
    case 'accepted':
      return { status: 202 as const, body: outcome.task };
    case 'done':
      return { status: 200 as const, ...written<F.DeployResponse | F.Declaration>(outcome.json) };
    case 'partial':
      return { status: 207 as const, ...written<F.DeployResponse>(outcome.json) };
    case 'empty':
      return { status: 204 as const, body: undefined };
  }
}

const tenantList = (tenants: string) => [...new Set(tenants.split(','))];

/** Declarative deployment at /mgmt/shared/appsvcs (designed after the real product): thin over the service. */
export function createAppsvcsHandlers(deps: { service: DeclarativeService }) {
  const { service } = deps;

  // The body's bytes only (`x-portolan-body-parsing: handler`): a large declaration is parsed and checked on a worker thread.
  const deployDeclaration: TypedHandler<F.DeployDeclarationData, F.DeployDeclarationResponses, F.DeployDeclarationErrors> = async ({
    query,
    rawBody,
  }) => {
    const deployQuery = {
      ...(query.async === undefined ? {} : { async: query.async }),
      ...(query.updateMode ? { updateMode: query.updateMode } : {}),
    };
    if (rawBody && isListBody(rawBody)) {
      // A list of declarations: each deployed in turn, each answered (appsvcs-multi.ts).
      const listed = await deployList(
        service,
        Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8'),
        deployQuery,
      );
      if (!listed.ok) return refusal(listed.error);
      if (listed.value.status >= 400) return refusal(listFailure(listed.value));
      return { status: listed.value.status as 200 | 202 | 207, ...written<F.DeployMultiResponse>(listText(listed.value)) };
    }
    const deployed = await service.deploy(rawBody, deployQuery);
    return deployed.ok ? deployAnswer(deployed.value) : refusal(deployed.error);
  };

  const getDeclaration: TypedHandler<F.GetDeclarationData, F.GetDeclarationResponses, F.GetDeclarationErrors> = async () => {
    const declaration = await service.declaration();
    return declaration === undefined ? { status: 204, body: undefined } : { status: 200, ...written<F.Declaration>(declaration) };
  };

  const getTenantDeclaration: TypedHandler<
    F.GetTenantDeclarationData,
    F.GetTenantDeclarationResponses,
    F.GetTenantDeclarationErrors
  > = async ({ params }) => {
    const declaration = await service.tenantDeclaration(tenantList(params.tenants));
    return declaration.ok ? { status: 200, ...written<F.Declaration>(declaration.value) } : refusal(declaration.error);
  };

  const deleteDeclaration: TypedHandler<F.DeleteDeclarationData, F.DeleteDeclarationResponses, F.DeleteDeclarationErrors> = async () => {
    const removed = await service.remove();
    return removed.ok ? { status: 200, ...written<F.DeployResponse>(removed.value) } : refusal(removed.error);
  };

  const deleteTenantDeclaration: TypedHandler<
    F.DeleteTenantDeclarationData,
    F.DeleteTenantDeclarationResponses,
    F.DeleteTenantDeclarationErrors
  > = async ({ params }) => {
    const removed = await service.remove(tenantList(params.tenants));
    return removed.ok ? { status: 200, ...written<F.DeployResponse>(removed.value) } : refusal(removed.error);
  };

  const listDeployTasks: TypedHandler<F.ListDeployTasksData, F.ListDeployTasksResponses, F.ListDeployTasksErrors> = async () => ({
    status: 200,
    ...written<F.DeployTaskList>(await service.listTasks()),
  });

  const getDeployTask: TypedHandler<F.GetDeployTaskData, F.GetDeployTaskResponses, F.GetDeployTaskErrors> = async ({ params }) => {
    const task = await service.getTask(params.taskId);
    return task.ok ? { status: 200, ...written<F.DeployTask>(task.value) } : refusal(task.error);
  };

  const getDeployInfo: TypedHandler<F.GetDeployInfoData, F.GetDeployInfoResponses, F.GetDeployInfoErrors> = () => ({
    status: 200,
    body: service.info(),
  });

  return {
    deployDeclaration,
    getDeclaration,
    getTenantDeclaration,
    deleteDeclaration,
    deleteTenantDeclaration,
    listDeployTasks,
    getDeployTask,
    getDeployInfo,
  };
}
