import type * as B from '../../../generated/topology/types.gen.ts';
import { refusal, refuse, type TypedHandler } from '../../server/handler-types.ts';
import type { DeviceInventory } from './device-inventory.ts';
import type { Problem } from './topology-check.ts';
import { invalidTopology, quote } from './topology-outcome.ts';
import { KIND_LABEL, type Definition, type ObjectKind } from './topology-plan.ts';
import type { TopologyRead } from './topology-reads.ts';
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
const TOPOLOGY_PATH = '/mgmt/cm/ssl-orch/api/topology';
/** Topologies in one answer of the list unless `$top` says otherwise (the spec's default). */
const DEFAULT_PAGE = 100;

/** The request of a read or delete of one object kind: the object's name in its path (the parameter's name differs by kind). */
type ByName = { path: Record<string, string> };
/** An object as a read answers it: its definition as stored, who uses it, where it is deployed. */
type ObjectRecord = Record<string, unknown> & { usedBy: string[]; devices: string[]; unconfirmedDevices: string[]; selfLink: string };
/** The error statuses every read (every delete) of an object kind declares: one handler serves them all. */
type ReadErrors = Record<
  keyof B.GetSslSettingsErrors & keyof B.GetSecurityPolicyErrors & keyof B.GetServiceChainErrors & keyof B.GetServiceErrors,
  B.RestError
>;
type DeleteErrors = Record<
  keyof B.DeleteTopologyErrors &
    keyof B.DeleteSslSettingsErrors &
    keyof B.DeleteSecurityPolicyErrors &
    keyof B.DeleteServiceChainErrors &
    keyof B.DeleteServiceErrors,
  B.RestError
>;

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

/** A topology as its read (and each item of the list) answers it. */
function topologyRecord(found: TopologyRead): B.TopologyRecord {
  const definition = found.definition as Definition &
    Pick<B.TopologyRecord, 'name' | 'type' | 'sslSetting' | 'securityPolicy' | 'targetList'>;
  return {
    ...definition,
    serviceChains: found.serviceChains,
    services: found.services,
    ...(found.lastTask ? { lastTaskId: found.lastTask.id, lastTaskStatus: found.lastTask.status } : {}),
    selfLink: `${SELF}${TOPOLOGY_PATH}/${definition.name}`,
    devices: found.devices,
    unconfirmedDevices: found.unconfirmedDevices,
  };
}

/** The topology configuration API's operations beyond the login (HTTP <-> the topology service). */
export function createTopologyHandlers(deps: TopologyHandlerDeps) {
  const { service } = deps;

  const createTopology: TypedHandler<B.CreateTopologyData, B.CreateTopologyResponses, B.CreateTopologyErrors> = async ({ body }) => {
    const problems = await deps.check(body);
    if (problems.length > 0) return refusal(invalidTopology(problems));
    const outcome = await service.create(body);
    if (!outcome.ok) return refusal(outcome.error);
    const record = taskRecord(outcome.value);
    return { status: 202, body: record, headers: { location: `/mgmt/cm/ssl-orch/tasks/api/${record.id}` } };
  };

  const getTopologyTask: TypedHandler<B.GetTopologyTaskData, B.GetTopologyTaskResponses, B.GetTopologyTaskErrors> = async ({ params }) => {
    const task = await service.task(params.taskId);
    return task ? { status: 200, body: taskRecord(task) } : refuse('taskNotFound', `Task ${quote(params.taskId)} was not found.`);
  };

  const getTopology: TypedHandler<B.GetTopologyData, B.GetTopologyResponses, B.GetTopologyErrors> = async ({ params }) => {
    const found = await service.readTopology(params.topologyName);
    if (!found) return refuse('objectNotFound', `Topology ${quote(params.topologyName)} was not found.`);
    return { status: 200, body: topologyRecord(found) };
  };

  const listTopologies: TypedHandler<B.ListTopologiesData, B.ListTopologiesResponses, B.ListTopologiesErrors> = async ({ query }) => {
    const skip = query.$skip ?? 0;
    const top = query.$top ?? DEFAULT_PAGE;
    const { total, topologies } = await service.listTopologies(skip, top);
    return {
      status: 200,
      body: {
        items: topologies.map(topologyRecord),
        totalItems: total,
        ...(skip + top < total ? { nextLink: `${SELF}${TOPOLOGY_PATH}?$top=${top}&$skip=${skip + top}` } : {}),
        kind: 'cm:ssl-orch:api:topology:topologycollectionstate',
        selfLink: `${SELF}${TOPOLOGY_PATH}`,
      },
    };
  };

  /** GET of an object kind: its definition as stored, who uses it, where it is deployed. */
  const reader =
    (kind: Exclude<ObjectKind, 'topology'>, param: string): TypedHandler<ByName, { 200: ObjectRecord }, ReadErrors> =>
    async ({ params }) => {
      const name = params[param]!;
      const found = await service.read(kind, name);
      if (!found) return refuse('objectNotFound', `${KIND_LABEL[kind]} ${quote(name)} was not found.`);
      const { definition, usedBy, devices, unconfirmedDevices } = found;
      return { status: 200, body: { ...definition, usedBy, devices, unconfirmedDevices, selfLink: `${SELF}${PATHS[kind]}/${name}` } };
    };
  /**
   * DELETE of any kind: 204; 200 with a `DeleteResult` when devices no longer in the inventory were
   * skipped (their tenants may still be there); or the refusal (404, 409 in use or busy, 503 a device failed).
   */
  const deleter =
    (kind: ObjectKind, param: string): TypedHandler<ByName, B.DeleteTopologyResponses, DeleteErrors> =>
    async ({ params }) => {
      const outcome = await service.remove(kind, params[param]!);
      if (!outcome.ok) return refusal(outcome.error);
      const { skippedDevices, message } = outcome.value;
      if (skippedDevices.length === 0) return { status: 204, body: undefined };
      return { status: 200, body: { message, skippedDevices } };
    };

  const listManagedDevices: TypedHandler<B.ListManagedDevicesData, B.ListManagedDevicesResponses, B.ListManagedDevicesErrors> = () => ({
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
    listTopologies,
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
