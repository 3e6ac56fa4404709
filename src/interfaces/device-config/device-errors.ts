import type { DeviceError } from '../../../generated/device-config/types.gen.ts';

/**
 * The device REST's error answers (REAL-PRODUCTS.md F): the message carries the real product's
 * object-validation code (`01020036:3` not found, `01020066:3` duplicate) and `apiError` 3.
 */
export const deviceError = <S extends number>(status: S, message: string, apiError = 3) => ({
  status,
  body: { code: status, message, errorStack: [], apiError } satisfies DeviceError,
});

/** `/<partition>/<name>`, the way the device names an object in messages and `fullPath`. */
export const fullPath = (partition: string, name: string) => `/${partition}/${name}`;

export const notFound = (kind: string, partition: string, name: string) =>
  deviceError(404, `01020036:3: The requested ${kind} (${fullPath(partition, name)}) was not found.`);

export const alreadyExists = (kind: string, partition: string, name: string) =>
  deviceError(409, `01020066:3: The requested ${kind} (${fullPath(partition, name)}) already exists in partition ${partition}.`);
