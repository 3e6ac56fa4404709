import type * as B from '../../../generated/topology/types.gen.ts';
import type { HandlerResponse, TypedHandler } from '../../server/handler-types.ts';
import type { DeviceInventory } from './device-inventory.ts';
import type { Problem } from './topology-check.ts';
import { KIND_LABEL, type Definition, type ObjectKind } from './topology-plan.ts';
import type { Refusal } from './topology-outcome.ts';
import type { TopologyService } from './topology-service.ts';
import type { TaskRow } from './topology-store.ts';

export type TopologyHandlerDeps = {
  service: TopologyService;
  inventory: DeviceInventory;
  /** Every problem of a create request ([] when it is valid): the schema, references, targets. */
  check: (body: unknown) => Promise<Problem[]>;
};

const SELF = 'https://localhost';
const PATHS: Readonly<Record<Exclude<ObjectKind, 'topology'>, string>> = {
  ssl: '/mgmt/cm/ssl-orch/api/ssl',
  policy: '/mgmt/cm/ssl-orch/api/security-policy',
  chain: '/mgmt/cm/ssl-orch/api/service-chain',
  service: '/mgmt/cm/ssl-orch/api/service',
};
const INVENTORY_PATH = '/mgmt/shared/resolver/device-groups/cm-bigip-allBigIpDevices/devices';

/** B's error body: `{code, message, referer, kind}`, never a piece of the request beyond a bounded name. */
const failure = <S extends number>(status: S, message: string, referer: string | undefined, extra: object = {}) => ({
  status,
  body: { code: status, message, ...extra, ...(referer ? { referer } : {}), kind: ':resterrorresponse' as const },
});
const refused = (refusal: Refusal, referer: string | undefined) => failure(refusal.status, refusal.message, referer);

const taskRecord = (task: TaskRow): B.TaskRecord => ({
  id: task.id,
  status: task.status,
  selfLink: `${SELF}/mgmt/cm/ssl-orch/tasks/api/${task.id}`,
  topologyName: task.topologyName,
  targets: task.targets,
  startTime: new Date(task.startMs).toISOString(),
  ...(task.endMs !== undefined ? { endTime: new Date(task.endMs).toISOString() } : {}),
  ...(task.message !== undefined ? { message: task.message } : {}),
});

/** The topology configuration API's operations beyond the login (HTTP <-> the topology service). */
export function createTopologyHandlers(deps: TopologyHandlerDeps) {
  const { service } = deps;

  const createTopology: TypedHandler<B.CreateTopologyData, B.CreateTopologyResponses & B.CreateTopologyErrors> = async ({
    body,
    remoteAddress,
  }) => {
    const problems = await deps.check(body);
    if (problems.length > 0) {
      const count = problems.filter((p) => !p.message.startsWith('... and ')).length;
      return failure(
        400,
        `Invalid topology request: ${problems.length === count ? count : `more than ${count}`} problem${count === 1 ? '' : 's'}.`,
        remoteAddress,
        { errors: problems },
      );
    }
    const outcome = await service.create(body);
    if (!outcome.ok) return failure(409, outcome.refusal.message, remoteAddress);
    const record = taskRecord(outcome.value);
    return { status: 202, body: record, headers: { location: `/mgmt/cm/ssl-orch/tasks/api/${record.id}` } };
  };

  const getTopologyTask: TypedHandler<B.GetTopologyTaskData, B.GetTopologyTaskResponses & B.GetTopologyTaskErrors> = async ({
    params,
    remoteAddress,
  }) => {
    const task = await service.task(params.taskId);
    return task ? { status: 200, body: taskRecord(task) } : failure(404, `Task '${params.taskId}' was not found.`, remoteAddress);
  };

  const getTopology: TypedHandler<B.GetTopologyData, B.GetTopologyResponses & B.GetTopologyErrors> = async ({ params, remoteAddress }) => {
    const found = await service.readTopology(params.topologyName);
    if (!found) return failure(404, `Topology '${params.topologyName}' was not found.`, remoteAddress);
    const definition = found.definition as Definition &
      Pick<B.TopologyRecord, 'name' | 'type' | 'sslSetting' | 'securityPolicy' | 'targetList'>;
    const body: B.TopologyRecord = {
      ...definition,
      serviceChains: found.serviceChains,
      services: found.services,
      ...(found.lastTask ? { lastTaskId: found.lastTask.id, lastTaskStatus: found.lastTask.status } : {}),
      selfLink: `${SELF}/mgmt/cm/ssl-orch/api/topology/${definition.name}`,
    };
    return { status: 200, body: { ...body, devices: found.devices, unconfirmedDevices: found.unconfirmedDevices } };
  };

  /** GET of an object kind: its definition as stored, who uses it, where it is deployed. */
  const reader =
    (kind: Exclude<ObjectKind, 'topology'>, param: string) =>
    async (request: { params: Record<string, string>; remoteAddress?: string }): Promise<HandlerResponse> => {
      const name = request.params[param]!;
      const found = await service.read(kind, name);
      if (!found) return failure(404, `${KIND_LABEL[kind]} '${name}' was not found.`, request.remoteAddress);
      const { definition, usedBy, devices, unconfirmedDevices } = found;
      return { status: 200, body: { ...definition, usedBy, devices, unconfirmedDevices, selfLink: `${SELF}${PATHS[kind]}/${name}` } };
    };
  /**
   * DELETE of any kind: 204; 200 with a `DeleteResult` when devices no longer in the inventory were
   * skipped (their tenants may still be there); or the refusal (404, 409 in use, 503 a device failed).
   */
  const deleter =
    (kind: ObjectKind, param: string) =>
    async (request: { params: Record<string, string>; remoteAddress?: string }): Promise<HandlerResponse> => {
      const outcome = await service.remove(kind, request.params[param]!);
      if (!outcome.ok) return refused(outcome.refusal, request.remoteAddress);
      const { skippedDevices, message } = outcome.value;
      if (skippedDevices.length === 0) return { status: 204 };
      const body: B.DeleteResult = { message, skippedDevices };
      return { status: 200, body };
    };

  const listManagedDevices: TypedHandler<B.ListManagedDevicesData, B.ListManagedDevicesResponses & B.ListManagedDevicesErrors> = () => ({
    status: 200,
    body: {
      items: deps.inventory.list().map((device) => ({
        hostname: device.hostname,
        address: new URL(device.url).hostname,
        managementUrl: device.url,
        product: 'BIG-IP',
        kind: 'shared:resolver:device-groups:restdeviceresolverdevicestate',
        selfLink: `${SELF}${INVENTORY_PATH}/${device.hostname}`,
      })),
      kind: 'shared:resolver:device-groups:devicegroupdevicecollectionstate',
      selfLink: `${SELF}${INVENTORY_PATH}`,
    },
  });

  return {
    createTopology,
    getTopologyTask,
    getTopology,
    deleteTopology: deleter('topology', 'topologyName'),
    getSslSettings: reader('ssl', 'sslSettingsName'),
    deleteSslSettings: deleter('ssl', 'sslSettingsName'),
    getSecurityPolicy: reader('policy', 'securityPolicyName'),
    deleteSecurityPolicy: deleter('policy', 'securityPolicyName'),
    getServiceChain: reader('chain', 'chainName'),
    deleteServiceChain: deleter('chain', 'chainName'),
    getService: reader('service', 'serviceName'),
    deleteService: deleter('service', 'serviceName'),
    listManagedDevices,
  };
}
