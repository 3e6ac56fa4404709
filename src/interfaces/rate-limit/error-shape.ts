import { statusOf, type ErrorCode } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/** The `error` of codes whose wire name is not the code in words (spec E: the status call's 500 example). */
const ERROR_NAMES: Partial<Record<ErrorCode, string>> = { counterStoreUnavailable: 'Internal Server Error' };

/** A registry code in words (`invalidRequest` -> `invalid request`), as the seed's `invalid user credentials`. */
const errorName = (code: ErrorCode) => ERROR_NAMES[code] ?? code.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/** The gateway's shape `{error, error-message}` (E, H and the gateway's own answers). */
export const renderGatewayError: ErrorRenderer = (e) => ({
  status: statusOf(e),
  body: { error: errorName(e.code), 'error-message': e.message },
});
