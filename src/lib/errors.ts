/**
 * The one registry of error codes. Each code has its HTTP status and a default message; each interface
 * renders a `PortolanError` in its own wire shape (see src/interfaces/<name>/error-shape.ts).
 * Codes are never embedded in message strings: the code travels beside the message.
 */
export const ERROR_CODES = {
  invalidRequest: { status: 400, message: 'The request is invalid.' },
  malformedBody: { status: 400, message: 'The request body could not be parsed.' },
  unauthorized: { status: 401, message: 'Authentication is required.' },
  forbidden: { status: 403, message: 'The operation is not allowed.' },
  notFound: { status: 404, message: 'No resource at this path.' },
  methodNotAllowed: { status: 405, message: 'The method is not allowed on this path.' },
  notAcceptable: { status: 406, message: 'None of the accepted media types can be produced.' },
  conflict: { status: 409, message: 'The resource already exists.' },
  payloadTooLarge: { status: 413, message: 'The request body is larger than the configured limit.' },
  unsupportedMediaType: { status: 415, message: 'The request body media type is not supported.' },
  tooManyRequests: { status: 429, message: 'Too many requests.' },
  internal: { status: 500, message: 'An unexpected error occurred.' },
  notImplemented: { status: 501, message: 'This operation is not implemented yet.' },
  badGateway: { status: 502, message: 'The upstream server did not answer.' },
  unavailable: { status: 503, message: 'The service is unavailable.' },
  gatewayTimeout: { status: 504, message: 'The upstream server did not answer in time.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An expected failure, as a value: rendered by the interface that produced it. */
export type PortolanError = {
  code: ErrorCode;
  message: string;
  /** Individual problems (validation errors), each a short sentence; never credentials. */
  details?: readonly string[];
};

export function portolanError(code: ErrorCode, message?: string, details?: readonly string[]): PortolanError {
  return { code, message: message ?? ERROR_CODES[code].message, ...(details?.length ? { details } : {}) };
}

export function statusOf(error: PortolanError): number {
  return ERROR_CODES[error.code].status;
}
