import { portolanError, type Result } from '../lib/errors.ts';

export type ParseResult = Result<unknown>;

/** A request target (origin-form) as its path and its query string (without the `?`). */
export function splitTarget(url: string): { path: string; query: string } {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? { path: url, query: '' } : { path: url.slice(0, queryStart), query: url.slice(queryStart + 1) };
}

/** Query string to a plain object without a prototype; repeated keys become arrays. */
export function parseQuery(queryString: string): Record<string, unknown> {
  const query: Record<string, unknown> = Object.create(null);
  if (!queryString) return query;
  for (const [key, value] of new URLSearchParams(queryString)) {
    const existing = query[key];
    query[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}

/** Cookie header to name -> value (first occurrence wins). */
export function parseCookies(header: string | string[] | undefined): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null);
  for (const part of [header ?? ''].flat().join(';').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in cookies)) cookies[name] = safeDecode(part.slice(eq + 1).trim());
  }
  return cookies;
}

/**
 * Body bytes to a value by media type: JSON parsed (malformed JSON is a 400), URL-encoded forms to
 * an object, text as a string; anything else stays bytes for the handler. (Multipart bodies are never
 * buffered: their operations stream, see body-policy.ts.)
 */
export function parseBody(mediaType: string, raw: Buffer | undefined): ParseResult {
  if (!raw || raw.length === 0) return { ok: true, value: undefined };
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return { ok: true, value: JSON.parse(raw.toString('utf8')) };
    } catch {
      // JSON.parse's message quotes the input, which may hold credentials: never echo it.
      return { ok: false, error: portolanError('malformedBody', 'The request body is not valid JSON.') };
    }
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form: Record<string, string> = Object.create(null);
    for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) form[key] = value;
    return { ok: true, value: { ...form } };
  }
  if (mediaType.startsWith('text/') || mediaType.endsWith('+xml') || mediaType === 'application/xml') {
    return { ok: true, value: raw.toString('utf8') };
  }
  return { ok: true, value: raw };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
