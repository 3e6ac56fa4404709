import type * as F from '../../../generated/device-config/types.gen.ts';
import type { HandlerResponse, TypedHandler } from '../../server/handler-types.ts';
import type { Answer, DeclarativeService } from './declarative-service.ts';

/**
 * The service's answers are in the appsvcs shapes the spec declares for each status; one that holds a
 * declaration is JSON text already and is written as it is (never parsed or serialised again here).
 */
const respond = (answer: Answer) =>
  (answer.json === undefined
    ? { status: answer.status, body: answer.body }
    : { status: answer.status, body: Buffer.from(answer.json), contentType: 'application/json' }) as HandlerResponse as never;

const tenantList = (tenants: string) => [...new Set(tenants.split(','))];

/** Declarative deployment at /mgmt/shared/appsvcs (designed after the real product): thin over the service. */
export function createAppsvcsHandlers(deps: { service: DeclarativeService }) {
  const { service } = deps;

  // The body's bytes only (`x-portolan-body-parsing: handler`): a large declaration is parsed and checked on a worker thread.
  const deployDeclaration: TypedHandler<F.DeployDeclarationData, F.DeployDeclarationResponses & F.DeployDeclarationErrors> = async ({
    query,
    rawBody,
  }) =>
    respond(
      await service.deploy(rawBody, {
        ...(query.async === undefined ? {} : { async: query.async }),
        ...(query.updateMode ? { updateMode: query.updateMode } : {}),
      }),
    );

  const getDeclaration: TypedHandler<F.GetDeclarationData, F.GetDeclarationResponses & F.GetDeclarationErrors> = async () =>
    respond(await service.read());

  const getTenantDeclaration: TypedHandler<
    F.GetTenantDeclarationData,
    F.GetTenantDeclarationResponses & F.GetTenantDeclarationErrors
  > = async ({ params }) => respond(await service.read(tenantList(params.tenants)));

  const deleteDeclaration: TypedHandler<F.DeleteDeclarationData, F.DeleteDeclarationResponses & F.DeleteDeclarationErrors> = async () =>
    respond(await service.remove());

  const deleteTenantDeclaration: TypedHandler<
    F.DeleteTenantDeclarationData,
    F.DeleteTenantDeclarationResponses & F.DeleteTenantDeclarationErrors
  > = async ({ params }) => respond(await service.remove(tenantList(params.tenants)));

  const listDeployTasks: TypedHandler<F.ListDeployTasksData, F.ListDeployTasksResponses & F.ListDeployTasksErrors> = async () =>
    respond(await service.listTasks());

  const getDeployTask: TypedHandler<F.GetDeployTaskData, F.GetDeployTaskResponses & F.GetDeployTaskErrors> = async ({ params }) =>
    respond(await service.getTask(params.taskId));

  const getDeployInfo: TypedHandler<F.GetDeployInfoData, F.GetDeployInfoResponses & F.GetDeployInfoErrors> = () => ({
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
