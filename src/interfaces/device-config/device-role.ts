import { createSqlDeclarationStore } from './declaration-store.ts';
import { createDeclarativeService, type DeclarativeService, type DeclarativeServiceOptions } from './declarative-service.ts';
import { createLeaseStore, fenceWrite } from './device-lease.ts';
import { createDevicePair, type DevicePairOptions } from './device-pair.ts';

export type DeviceRoleOptions = Omit<DeclarativeServiceOptions, 'store' | 'pair' | 'owner'> &
  Pick<DevicePairOptions, 'holder' | 'url' | 'holderGone' | 'onRenewed'> & {
    /** Runs first when this process becomes active, before the data plane is bound (the saved system database variables). */
    beforeActive?: () => Promise<void>;
  };

/**
 * The device's deployment side as one process of an active/standby pair on one store: the pair (device-pair.ts)
 * over the lease (device-lease.ts), the declaration store whose deployment writes are fenced by the lease,
 * and the declarative service, activated and deactivated by the pair.
 *
 * @example
 * const device = createDeviceRole({ db, dataPlane, clock, timers, logger, holder: newHolderId(), url, leaseMs: 4000, ... });
 * await device.start(); // active at once when nobody holds the lease; standby otherwise
 * device.pair.status(); // { role: 'active', activeUrl: 'http://127.0.0.1:8100' }
 */
export function createDeviceRole(options: DeviceRoleOptions) {
  const { db, clock, timers, logger } = options;
  // The pair calls back into the service (created below, before the pair starts).
  let service: DeclarativeService | undefined;
  const pair = createDevicePair({
    lease: createLeaseStore(db),
    clock,
    timers,
    logger,
    holder: options.holder,
    url: options.url,
    leaseMs: options.leaseMs,
    ...(options.holderGone ? { holderGone: options.holderGone } : {}),
    ...(options.onRenewed ? { onRenewed: options.onRenewed } : {}),
    onActive: async () => {
      await options.beforeActive?.();
      await service!.activate();
    },
    onStandby: () => service!.deactivate(),
  });
  const store = createSqlDeclarationStore(db, { fence: (tx) => fenceWrite(tx, pair.hold()) });
  service = createDeclarativeService({
    ...options,
    store,
    owner: options.holder,
    pair: { isActive: () => pair.isActive(), activeUrl: () => pair.status().activeUrl },
  });
  const declarative = service;
  return {
    pair,
    service: declarative,
    store,
    /** Takes the lease if it is free and becomes active, or stands by; answers either way once it resolves. */
    async start(): Promise<void> {
      await pair.start();
      declarative.markReady();
    },
    /** Steps down (the data plane emptied, the lease given up for the other process to take at once) and stops. */
    async stop(): Promise<void> {
      await pair.stop();
      await declarative.stop();
    },
  };
}

export type DeviceRole = ReturnType<typeof createDeviceRole>;
