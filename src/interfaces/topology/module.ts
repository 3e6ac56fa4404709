import { randomUUID } from 'node:crypto';
import { hostname as machineHostname } from 'node:os';
import type { ValidateFunction } from 'ajv';
import type * as Sdk from '../../../generated/topology/sdk.gen.ts';
import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import { createTokenService } from '../../accounts/auth-tokens.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule, type ModuleConfig, type ModuleContext } from '../../server/interface-module.ts';
import { headerTokenScheme } from '../../server/security.ts';
import { createJobQueue, createJobWorker } from '../../stores/job-queue.ts';
import { DEVICE_SETTINGS } from '../device-config/settings.ts';
import { createTopologyAuthHandlers } from './auth-handlers.ts';
import { createDeviceClient } from './device-client.ts';
import { createDeviceInventory } from './device-inventory.ts';
import { renderTopologyError } from './error-shape.ts';
import { TOPOLOGY_MIGRATIONS } from './migrations.ts';
import { TOPOLOGY_SETTINGS } from './settings.ts';
import { checkTopologyRequest } from './topology-check.ts';
import { createTopologyHandlers } from './topology-handlers.ts';
import { createTopologyService } from './topology-service.ts';

type Config = ModuleConfig<typeof TOPOLOGY_SETTINGS, typeof DEVICE_SETTINGS>;

/** The job queue of deployment tasks. */
const DEPLOY_QUEUE = 'topology-deploy';
/** A task whose deployment was claimed this many times (crashes, errors) ends FAILED. */
const DEPLOY_ATTEMPTS = 3;

/** The management system's tokens: its own issuer, so a device token is unknown here and the other way round. */
const tokensOf = (context: ModuleContext<Config>) =>
  createTokenService(context.database, {
    clock: context.clock,
    issuer: 'central',
    accessTimeoutSeconds: context.config.centralTokenTimeoutSeconds,
  });

/**
 * Interface B, the topology configuration API of the management system: the token login, topologies
 * checked whole and saved with a durable deployment task (the job port), deployed to the inventory's
 * devices over their REST, read and deleted in the seed's order.
 */
export const topologyModule = defineModule({
  name: 'topology',
  settings: TOPOLOGY_SETTINGS,
  // The device's host name names this installation's own device in the inventory.
  reads: DEVICE_SETTINGS,
  migrations: TOPOLOGY_MIGRATIONS,
  errorShape: () => renderTopologyError,
  authenticators: (context) => {
    const tokens = tokensOf(context);
    return {
      vendorAuthToken: headerTokenScheme('X-Vendor-Auth-Token', (token) => tokens.verify(token), {
        missing: 'X-Vendor-Auth-Token is required; log in first.',
        invalid: 'The token is unknown or expired; log in again.',
      }),
    };
  },
  create: (context) => {
    const { config, clock, database: db, timers } = context;
    const logger = context.logger.child({ role: 'central', component: 'topology' });
    const inventory = createDeviceInventory({
      setting: config.centralDevices,
      admin: { username: context.admin.username, password: context.admin.password },
      local: {
        hostname: config.deviceHostname || machineHostname(),
        url: () => context.roleUrl('device') ?? `http://${config.host}:${config.ports.device}`,
      },
    });
    const jobs = createJobQueue(db, { clock });
    let worker: ReturnType<typeof createJobWorker<{ taskId: string }>> | undefined;
    const service = createTopologyService({
      db,
      clock,
      logger,
      inventory,
      devices: createDeviceClient({ clock, timers, timeoutMs: config.centralDeviceTimeoutMs }),
      newTaskId: randomUUID,
      enqueueDeployment: async (tx, taskId) => {
        await jobs.enqueue(DEPLOY_QUEUE, { taskId }, { id: taskId, tx });
      },
    });
    context.onRole('central', {
      start: async () => {
        worker = createJobWorker<{ taskId: string }>({
          db,
          queue: DEPLOY_QUEUE,
          clock,
          timers,
          owner: `${machineHostname()}:${process.pid}:${randomUUID()}`,
          leaseMs: config.centralTaskLeaseMs,
          pollMs: Math.min(1000, Math.max(50, Math.floor(config.centralTaskLeaseMs / 4))),
          maxAttempts: DEPLOY_ATTEMPTS,
          run: (job, { signal }) => service.deploy(job.payload.taskId, signal),
          giveUp: (job, reason) => service.giveUp(job.payload.taskId, reason),
          // The task records are the topology store's; a finished job row is only the queue's history.
          retainFinishedMs: config.centralJobRetentionSeconds * 1000,
          logger,
        });
        worker.start();
      },
      // A deployment under way is cut at once and taken up again after the restart (its lease lapses),
      // rather than failed by a device that is shutting down beside it.
      stop: async () => {
        await worker?.stop({ graceMs: 0 });
      },
    });
    // ajv's 2020 draft is loaded on the first create, not at start.
    let schemas: Promise<(name: string) => ValidateFunction> | undefined;
    const loadSchemas = () =>
      (schemas ??= import('../../lib/spec-ajv.ts').then(
        ({ createSpecValidator }) => {
          const specs = createSpecValidator(context.runtime.document);
          return (name: string) => specs.at(`/components/schemas/${name}`);
        },
        (error: unknown) => {
          schemas = undefined;
          throw error;
        },
      ));
    const handlers = createTopologyHandlers({
      service: {
        ...service,
        create: async (request: TopologyRequest) => {
          const outcome = await service.create(request);
          if (outcome.ok) worker?.poke();
          return outcome;
        },
      },
      inventory,
      check: async (body) => checkTopologyRequest(body, { schema: await loadSchemas(), knownDevices: inventory.hostnames() }),
    });
    return {
      ...createTopologyAuthHandlers({ tokens: tokensOf(context), checkPassword: context.adminAuthenticator }),
      ...handlers,
    } satisfies OperationHandlers<typeof Sdk>;
  },
});
