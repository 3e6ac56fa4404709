/**
 * The one registry of error codes. Each code has its HTTP status and a default message; each interface
 * renders a `PortolanError` in its own wire shape (see src/interfaces/<name>/error-shape.ts).
 * Codes are never embedded in message strings: the code travels beside the message, and validation
 * problems travel as structured values (pointer, keyword, message), never parsed back out of text.
 */
export const ERROR_CODES = {
  invalidRequest: { status: 400, message: 'The request is invalid.' },
  malformedBody: { status: 400, message: 'The request body could not be parsed.' },
  unauthorized: { status: 401, message: 'Authentication is required.' },
  forbidden: { status: 403, message: 'The operation is not allowed.' },
  notFound: { status: 404, message: 'No resource at this path.' },
  methodNotAllowed: { status: 405, message: 'The method is not allowed on this path.' },
  notAcceptable: { status: 406, message: 'None of the accepted media types can be produced.' },
  requestTimeout: { status: 408, message: 'The request was not received in time.' },
  conflict: { status: 409, message: 'The resource already exists.' },
  payloadTooLarge: { status: 413, message: 'The request body is larger than the configured limit.' },
  uriTooLong: { status: 414, message: 'The request URL is longer than the configured limit.' },
  unsupportedMediaType: { status: 415, message: 'The request body media type is not supported.' },
  unprocessable: { status: 422, message: 'The request is well-formed but cannot be processed.' },
  tooManyRequests: { status: 429, message: 'Too many requests.' },
  headersTooLarge: { status: 431, message: 'The request headers are larger than the configured limit.' },
  internal: { status: 500, message: 'An unexpected error occurred.' },
  notImplemented: { status: 501, message: 'This operation is not implemented yet.' },
  badGateway: { status: 502, message: 'The upstream server did not answer.' },
  unavailable: { status: 503, message: 'The service is unavailable.' },
  gatewayTimeout: { status: 504, message: 'The upstream server did not answer in time.' },
  // Domain codes: an interface's own expected failures, rendered like any other.
  sessionNotFound: { status: 404, message: 'No access session with this id (unknown or expired).' },
  missingSessionVariable: { status: 409, message: 'The session lacks a variable this operation needs.' },
  invalidToken: { status: 400, message: 'The identity token cannot be parsed.' },
  objectNotFound: { status: 404, message: 'The requested object was not found.' },
  objectExists: { status: 409, message: 'The requested object already exists.' },
  objectReferenceInvalid: { status: 400, message: 'The request names an object that does not exist.' },
  incompleteCommand: { status: 400, message: 'incomplete command' },
  scriptInvalid: { status: 400, message: 'The script text is not valid.' },
  valueOutOfRange: { status: 400, message: 'The value is outside the allowed range.' },
  declarationInvalid: { status: 422, message: 'declaration is invalid' },
  declarationFailed: { status: 422, message: 'declaration failed' },
  deploymentBusy: { status: 503, message: 'Another configuration operation is in progress.' },
  taskNotFound: { status: 404, message: 'No deployment task with this id.' },
  tenantNotFound: { status: 404, message: 'A named tenant is not deployed.' },
  invalidPath: { status: 400, message: 'Bad Request: Invalid path' },
  applicationNotFound: { status: 404, message: 'A named application is not deployed.' },
  appsvcsRequestRefused: { status: 400, message: 'The declarative deployment service refuses this request.' },
  deviceStandby: { status: 503, message: 'This device is the standby of its pair; configuration operations run on the active one.' },
  // D (client registration): the flow refused, at the credential check or at the management step that failed.
  credentialsRejected: { status: 403, message: 'access denied by the access policy' },
  clientAppCreationFailed: { status: 403, message: 'The client application could not be created.' },
  clientAppBindingFailed: { status: 403, message: 'The client application could not be bound to the OAuth profile.' },
  accessPolicySyncFailed: { status: 403, message: 'The access policy could not be applied.' },
  // E (rate limit): the status call could not read the counter store.
  counterStoreUnavailable: { status: 500, message: 'rate-limit counter store unavailable' },
  // B (topology): a create the topology check refused, an object in the way of a create or a delete, a device a delete could not finish on.
  topologyInvalid: { status: 400, message: 'Invalid topology request.' },
  objectInUse: { status: 409, message: 'The object is used by another object; delete that one first.' },
  objectBusy: { status: 409, message: 'The object is being created, deployed or deleted; try again when that has ended.' },
  deviceUnavailable: { status: 503, message: 'A device could not complete the change; send the request again.' },
  // C (snapshot diagnostics): an upload the account's quota has no room for, an upload the server's disk had no room for.
  snapshotQuotaExceeded: { status: 507, message: "The snapshot does not fit in the account's storage quota." },
  insufficientStorage: { status: 507, message: 'The server has no storage space left for the request.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * One validation problem: where (a JSON pointer into the request: `/body/name`, `/query/limit`,
 * `/header/user-agent`, `/path/chartId`), which schema keyword failed, and a short sentence. Built from
 * the schema, never from the submitted value: a problem never repeats what was sent beyond a bounded
 * property name.
 */
export type Problem = {
  pointer: string;
  keyword: string;
  message: string;
  /** The keyword's own parameters from the schema (allowed values, limits, the missing property). */
  params?: Readonly<Record<string, unknown>>;
};

/** An expected failure, as a value: rendered by the interface that produced it. */
export type PortolanError = {
  code: ErrorCode;
  message: string;
  /** Individual validation problems, at most a bounded number; never credentials. */
  problems?: readonly Problem[];
  /**
   * Further members of the error body, in order, each value already JSON text: for a real product
   * whose error bodies say more than a message (F's declarative deployment: `errors`, `results`, and
   * the declaration, which can be megabytes and is never serialised again). Only the error shape of
   * the interface that made the error renders them; never credentials.
   */
  members?: readonly (readonly [key: string, json: string])[];
};

export function portolanError(code: ErrorCode, message?: string, problems?: readonly Problem[]): PortolanError {
  return { code, message: message ?? ERROR_CODES[code].message, ...(problems?.length ? { problems } : {}) };
}

export function statusOf(error: PortolanError): number {
  return ERROR_CODES[error.code].status;
}

/** An expected outcome: a value, or the failure that stands in for it (bugs still throw). */
export type Result<T, E = PortolanError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const fail = <E>(error: E): Result<never, E> => ({ ok: false, error });
