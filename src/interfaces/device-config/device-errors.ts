import type { DeviceError } from '../../../generated/device-config/types.gen.ts';
import { ERROR_CODES, portolanError } from '../../lib/errors.ts';
import { renderDeviceError } from './error-shape.ts';

/** The device REST's own failures: codes of the one registry (src/lib/errors.ts). */
export type DeviceFailureCode =
  | 'objectNotFound'
  | 'objectExists'
  | 'objectReferenceInvalid'
  | 'unauthorized'
  | 'forbidden'
  | 'incompleteCommand'
  | 'scriptInvalid'
  | 'valueOutOfRange';

/**
 * A device REST failure (REAL-PRODUCTS.md F): the registry code's status, rendered in the device's
 * shape (`apiError` 3 for these); the message carries the real product's object-validation code
 * (`01020036:3` not found, `01020066:3` duplicate).
 */
export const deviceFailure = <K extends DeviceFailureCode>(code: K, message: string) => ({
  status: ERROR_CODES[code].status as (typeof ERROR_CODES)[K]['status'],
  body: renderDeviceError(portolanError(code, message), { headers: {} }).body as DeviceError,
});

/** `/<partition>/<name>`, the way the device names an object in messages and `fullPath`. */
export const fullPath = (partition: string, name: string) => `/${partition}/${name}`;

const notFoundMessage = (kind: string, partition: string, name: string) =>
  `01020036:3: The requested ${kind} (${fullPath(partition, name)}) was not found.`;

export const notFound = (kind: string, partition: string, name: string) =>
  deviceFailure('objectNotFound', notFoundMessage(kind, partition, name));

/** A request body naming an object that does not exist: a bad request, not a missing resource. */
export const unknownReference = (kind: string, partition: string, name: string) =>
  deviceFailure('objectReferenceInvalid', notFoundMessage(kind, partition, name));

export const alreadyExists = (kind: string, partition: string, name: string) =>
  deviceFailure(
    'objectExists',
    `01020066:3: The requested ${kind} (${fullPath(partition, name)}) already exists in partition ${partition}.`,
  );
