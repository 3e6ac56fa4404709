import { statusOf, type ErrorCode } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/**
 * The device REST's `apiError` numbers (REAL-PRODUCTS.md): 1 for an unparsable body and for failed
 * authentication, 3 for the object-validation failures (missing, duplicate, unknown reference, a
 * malformed script, a value out of range), 26214401 for the framework's own validation and an
 * incomplete command; other failures
 * carry their HTTP status.
 */
const DEVICE_API_ERROR: Partial<Record<ErrorCode, number>> = {
  malformedBody: 1,
  unauthorized: 1,
  forbidden: 1,
  notFound: 3,
  objectNotFound: 3,
  objectExists: 3,
  objectReferenceInvalid: 3,
  scriptInvalid: 3,
  valueOutOfRange: 3,
  invalidRequest: 26214401,
  incompleteCommand: 26214401,
};

/** F: `{code, message, errorStack, apiError}`. */
export const renderDeviceError: ErrorRenderer = (e) => ({
  status: statusOf(e),
  body: {
    code: statusOf(e),
    message: e.code === 'malformedBody' ? 'Found invalid JSON body in the request.' : e.message,
    errorStack: [],
    apiError: DEVICE_API_ERROR[e.code] ?? statusOf(e),
  },
});
