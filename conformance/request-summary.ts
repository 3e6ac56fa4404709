import type { HttpRequest } from './http.ts';
import { withoutCredentials } from './targets.ts';

const SECRET_HEADERS = /^(authorization|cookie|x-vendor-auth-token|proxy-authorization)$/i;
const SECRET_FIELDS = /"(password|passwd|secret|client_secret|token|refreshToken)"\s*:\s*"[^"]*"/gi;
const SECRET_FORM_FIELDS = /\b(password|passwd|secret|client_secret|token)=[^&]*/gi;

/**
 * One printable line for a request (fuzz failures, reports): method, URL, the headers the engine set
 * that are not credentials, and the body cut at 400 characters. Credentials are replaced by `***`
 * (a user and password in the URL are left out).
 */
export function describeRequest(request: HttpRequest): string {
  const headers = Object.entries(request.headers)
    .map(([k, v]) => `${k}: ${SECRET_HEADERS.test(k) ? '***' : v}`)
    .join(', ');
  let body = '';
  if (request.body !== undefined) {
    const text = typeof request.body === 'string' ? request.body : Buffer.from(request.body).toString('utf8');
    const safe = text.replace(SECRET_FIELDS, '"$1":"***"').replace(SECRET_FORM_FIELDS, '$1=***');
    body = ` body ${safe.length > 400 ? `${safe.slice(0, 400)}... (${text.length} bytes)` : safe}`;
  }
  return `${request.method} ${withoutCredentials(request.url)}${headers ? ` [${headers}]` : ''}${body}`;
}
