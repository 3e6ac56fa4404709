import type * as F from '../../../generated/device-config/types.gen.ts';
import { refusal, type TypedHandler } from '../../server/handler-types.ts';
import type { DeviceConfigStore } from './config-store.ts';
import { DB_VARIABLES, inRange, isDbVariable, outOfRangeMessage, type DbValues, type DbVariableName } from './db-variables.ts';
import { deviceFailure } from './device-errors.ts';

import { DEVICE_VERSION as VERSION } from './device-version.ts';

/** The device's identity (device-info, designed after the real device). */
export type DeviceIdentity = { hostname: string; machineId: string };

const dbState = (name: DbVariableName, value: string, generation: number): F.DbVariable => ({
  kind: 'tm:sys:db:dbstate',
  name,
  fullPath: name,
  generation,
  selfLink: `https://localhost/mgmt/tm/sys/db/${name}?ver=${VERSION}`,
  defaultValue: DB_VARIABLES[name].defaultValue,
  scfConfig: 'true',
  value,
  valueRange: DB_VARIABLES[name].range.join(' '),
});

const unknownVariable = (name: string) =>
  deviceFailure('objectNotFound', `01020036:3: The requested db variable (${name.slice(0, 64)}) was not found.`);

/**
 * System database variables (saved, then applied at once through `apply`: the data plane's qlog trace,
 * access log and log level) and the device's identity.
 */
export function createSystemHandlers(deps: { store: DeviceConfigStore; identity: DeviceIdentity; apply(values: DbValues): Promise<void> }) {
  const getDbVariable: TypedHandler<F.GetDbVariableData, F.GetDbVariableResponses, F.GetDbVariableErrors> = async ({ params }) => {
    if (!isDbVariable(params.dbName)) return refusal(unknownVariable(params.dbName));
    const { values, generations } = await deps.store.dbVariables();
    return { status: 200, body: dbState(params.dbName, values[params.dbName], generations[params.dbName]) };
  };

  const patchDbVariable: TypedHandler<F.PatchDbVariableData, F.PatchDbVariableResponses, F.PatchDbVariableErrors> = async ({
    params,
    body,
  }) => {
    const name = params.dbName;
    if (!isDbVariable(name)) return refusal(unknownVariable(name));
    if (!inRange(name, body.value)) return refusal(deviceFailure('valueOutOfRange', outOfRangeMessage(name)));
    // Applied first: a value the data plane cannot take (the data directory not writable) is not kept.
    await deps.apply({ ...(await deps.store.dbVariables()).values, [name]: body.value });
    const generation = await deps.store.setDbVariable(name, body.value);
    return { status: 200, body: dbState(name, body.value, generation) };
  };

  const getDeviceInfo: TypedHandler<F.GetDeviceInfoData, F.GetDeviceInfoResponses, F.GetDeviceInfoErrors> = () => ({
    status: 200,
    body: {
      kind: 'shared:resolver:device-groups:deviceinfostate',
      selfLink: 'https://localhost/mgmt/shared/identified-devices/config/device-info',
      hostname: deps.identity.hostname,
      machineId: deps.identity.machineId,
      product: 'Portolan Traffic Manager',
      platform: 'Z100',
      edition: 'Final',
      version: VERSION,
      build: '0.0.3',
      restFrameworkVersion: VERSION,
      generation: 0,
      lastUpdateMicros: 0,
    },
  });

  return { getDbVariable, patchDbVariable, getDeviceInfo };
}
