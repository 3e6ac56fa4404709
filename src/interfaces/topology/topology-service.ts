import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import type { DeviceClient } from './device-client.ts';
import type { DeviceInventory } from './device-inventory.ts';
import { createTopologyCreate } from './topology-create.ts';
import { createTopologyDelete } from './topology-delete.ts';
import { createDeployRunner } from './topology-deploy.ts';
import { createTopologyReads } from './topology-reads.ts';

export type TopologyServiceOptions = {
  db: Database;
  clock: Clock;
  logger: Logger;
  inventory: DeviceInventory;
  devices: DeviceClient;
  newTaskId: () => string;
  /** Queues the task's deployment inside the transaction that saves it (the job port). */
  enqueueDeployment: (tx: Database, taskId: string) => Promise<void>;
};

/**
 * The management system (B): creates topologies with their objects (reusing identical ones),
 * deploys them to the target devices as a durable task, reads and deletes them in an order that
 * keeps the devices and the records in step. Spec: specs/topology.yaml (info.description).
 * Expected failures are registry values (src/lib/errors.ts); the handlers answer them.
 */
export function createTopologyService(options: TopologyServiceOptions) {
  const { db, clock, logger, inventory, devices, newTaskId, enqueueDeployment } = options;
  return {
    create: createTopologyCreate({ db, clock, newTaskId, enqueueDeployment }),
    ...createDeployRunner({ db, clock, logger, inventory, devices, newRunId: newTaskId }),
    remove: createTopologyDelete({ db, clock, inventory, devices }),
    ...createTopologyReads(db),
  };
}

export type TopologyService = ReturnType<typeof createTopologyService>;
