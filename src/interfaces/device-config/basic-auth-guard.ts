import type { Handler, HandlerResponse } from '../../server/handler-types.ts';
import type { BasicAuthenticator } from '../../accounts/basic-auth.ts';

/** The real product's basic-authentication challenge. */
const CHALLENGE = { 'www-authenticate': 'Basic realm="Enterprise Manager"' };

const unauthorized = (message: string): HandlerResponse => ({
  status: 401,
  body: { code: 401, message, errorStack: [], apiError: 1 },
  headers: CHALLENGE,
});

/**
 * Every device operation needs the user's credentials (seed Authentication F: basic authentication
 * with the administrative account). Missing or wrong: 401 in the device error shape with a challenge;
 * the message never repeats what was sent.
 */
export function requireBasicAuth(authenticate: BasicAuthenticator, handler: Handler): Handler {
  return async (request) => {
    const header = request.headers.authorization;
    if (header === undefined || header === '') return unauthorized('Authorization failed: no user authentication header or token detected.');
    if (!(await authenticate(header))) return unauthorized('Authentication failed.');
    return handler(request);
  };
}
