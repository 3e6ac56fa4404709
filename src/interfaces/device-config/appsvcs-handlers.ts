import type * as F from '../../../generated/device-config/types.gen.ts';
import type { HandlerResponse, TypedHandler } from '../../server/handler-types.ts';
import type { Answer, DeclarativeService } from './declarative-service.ts';

/** The service's answers are in the appsvcs shapes the spec declares for each status. */
const respond = (answer: Answer) => answer as HandlerResponse as never;

const tenantList = (tenants: string) => [...new Set(tenants.split(','))];

/** Declarative deployment at /mgmt/shared/appsvcs (designed after the real product): thin over the service. */
export function createAppsvcsHandlers(deps: { service: DeclarativeService }) {
  const { service } = deps;

  // The body's bytes too: a large declaration is checked from them on a worker thread.
  const deployDeclaration: TypedHandler<F.DeployDeclarationData, F.DeployDeclarationResponses & F.DeployDeclarationErrors> = async ({ body, query, rawBody }) =>
    respond(await service.deploy(body, { ...(query.async === undefined ? {} : { async: query.async }), ...(query.updateMode ? { updateMode: query.updateMode } : {}) }, rawBody));

  const getDeclaration: TypedHandler<F.GetDeclarationData, F.GetDeclarationResponses & F.GetDeclarationErrors> = async () => respond(await service.read());

  const getTenantDeclaration: TypedHandler<F.GetTenantDeclarationData, F.GetTenantDeclarationResponses & F.GetTenantDeclarationErrors> = async ({ params }) =>
    respond(await service.read(tenantList(params.tenants)));

  const deleteDeclaration: TypedHandler<F.DeleteDeclarationData, F.DeleteDeclarationResponses & F.DeleteDeclarationErrors> = async () => respond(await service.remove());

  const deleteTenantDeclaration: TypedHandler<F.DeleteTenantDeclarationData, F.DeleteTenantDeclarationResponses & F.DeleteTenantDeclarationErrors> = async ({ params }) =>
    respond(await service.remove(tenantList(params.tenants)));

  const listDeployTasks: TypedHandler<F.ListDeployTasksData, F.ListDeployTasksResponses & F.ListDeployTasksErrors> = async () => respond(await service.listTasks());

  const getDeployTask: TypedHandler<F.GetDeployTaskData, F.GetDeployTaskResponses & F.GetDeployTaskErrors> = async ({ params }) => respond(await service.getTask(params.taskId));

  const getDeployInfo: TypedHandler<F.GetDeployInfoData, F.GetDeployInfoResponses & F.GetDeployInfoErrors> = () => ({ status: 200, body: service.info() });

  return { deployDeclaration, getDeclaration, getTenantDeclaration, deleteDeclaration, deleteTenantDeclaration, listDeployTasks, getDeployTask, getDeployInfo };
}
