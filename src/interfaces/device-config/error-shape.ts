import { statusOf, type ErrorCode, type PortolanError } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';
import { objectText } from './declaration/json-text.ts';

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

/** The declarative deployment's failures (`/mgmt/shared/appsvcs`), in the real extension's own shape. */
const APPSVCS_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'declarationInvalid',
  'declarationFailed',
  'deploymentBusy',
  'deviceStandby',
  'taskNotFound',
  'tenantNotFound',
  'invalidPath',
  'applicationNotFound',
  'appsvcsRequestRefused',
]);

/**
 * appsvcs: `{code, message, ...}`, the further members (`errors`, `results`, `declaration`, `dryRun`)
 * after them; they are JSON text already (a declaration of megabytes), so they are joined, not serialised.
 */
function renderAppsvcsError(e: PortolanError) {
  const status = statusOf(e);
  if (!e.members?.length) return { status, body: { code: status, message: e.message } };
  const text = objectText([['code', JSON.stringify(status)], ['message', JSON.stringify(e.message)], ...e.members]);
  return { status, body: Buffer.from(text), contentType: 'application/json' };
}

/** F: the device REST's `{code, message, errorStack, apiError}`, and the declarative deployment's own shape. */
export const renderDeviceError: ErrorRenderer = (e) =>
  APPSVCS_CODES.has(e.code)
    ? renderAppsvcsError(e)
    : {
        status: statusOf(e),
        body: {
          code: statusOf(e),
          message: e.code === 'malformedBody' ? 'Found invalid JSON body in the request.' : e.message,
          errorStack: [],
          apiError: DEVICE_API_ERROR[e.code] ?? statusOf(e),
        },
      };
