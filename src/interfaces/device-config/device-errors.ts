import { ERROR_CODES, type ErrorCode, type PortolanError } from '../../lib/errors.ts';

/** A registry failure whose code is known to the type system (a handler's declared errors are checked against it). */
export type CodedError<C extends ErrorCode> = PortolanError & { code: C };

/** A failure of one of F's codes: the registry's message unless the real product's own is given. */
export const codedError = <C extends ErrorCode>(
  code: C,
  message: string = ERROR_CODES[code].message,
  members?: PortolanError['members'],
): CodedError<C> => ({ code, message, ...(members?.length ? { members } : {}) });

/** The device REST's own failures: codes of the one registry (src/lib/errors.ts), rendered by error-shape.ts. */
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
 * A device REST failure (REAL-PRODUCTS.md F): the message carries the real product's
 * object-validation code (`01020036:3` not found, `01020066:3` duplicate).
 */
export const deviceFailure = <K extends DeviceFailureCode>(code: K, message: string): CodedError<K> => codedError(code, message);

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
