import { portolanError, type PortolanError } from '../lib/errors.ts';

export type ParseResult = { ok: true; value: unknown } | { ok: false; error: PortolanError };

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
 * an object, multipart forms to fields (files as `File`s, parsed by the platform's fetch `FormData`),
 * text as a string; anything else stays bytes for the handler.
 */
export async function parseBody(contentType: string | string[] | undefined, raw: Buffer | undefined): Promise<ParseResult> {
  if (!raw || raw.length === 0) return { ok: true, value: undefined };
  const mediaType = String([contentType].flat()[0] ?? '').split(';')[0]!.trim().toLowerCase();
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
  if (mediaType === 'multipart/form-data') {
    try {
      const form = await new Response(raw as Uint8Array<ArrayBuffer>, { headers: { 'content-type': String([contentType].flat()[0]) } }).formData();
      const fields: Record<string, string | File> = {};
      for (const [key, value] of form) fields[key] = value;
      return { ok: true, value: fields };
    } catch {
      return { ok: false, error: portolanError('malformedBody', 'The multipart request body could not be parsed.') };
    }
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
