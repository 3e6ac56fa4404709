// One answer of the reference pages (src/server/reference-pages.ts) made once and sent many times: its
// bytes, their gzip form, a strong ETag per form, its content type and caching; and the answer it makes to
// a request, with HEAD, conditional GET (304) and gzip when the client accepts it (the adapter writes it).
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { promisify } from 'node:util';
import { gzip as zlibGzip } from 'node:zlib';
import type { StageResponse } from './stages.ts';

export type Representation = {
  body: Buffer;
  /** The body gzipped, when that is worth it (text larger than a packet). */
  gzipped?: Buffer;
  /** Strong ETag of `body` (the gzipped form's is derived from it). */
  etag: string;
  contentType: string;
  cacheControl: string;
};

/** Text smaller than this goes out as it is: compressing it saves less than it costs. */
const GZIP_MIN_BYTES = 1024;

/** Compresses bytes off the event loop (zlib's thread pool): a 2 MB file takes tens of milliseconds. */
export type Gzip = (bytes: Buffer) => Promise<Buffer>;

/** zlib's asynchronous gzip: never gzipSync, which would stop every role of the process meanwhile. */
export const asyncGzip: Gzip = promisify(zlibGzip);

/** Builds a representation without a gzip form (hashes the bytes once): for answers too small or not worth compressing. */
export function representation(body: Buffer | string, contentType: string, cacheControl: string): Representation {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const etag = `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;
  return { body: bytes, etag, contentType, cacheControl };
}

/**
 * Builds a representation with its gzip form, compressed once through `gzip` (asynchronous, so the
 * event loop goes on serving meanwhile); text smaller than a packet is left as it is.
 */
export async function compressedRepresentation(
  body: Buffer | string,
  contentType: string,
  cacheControl: string,
  gzip: Gzip = asyncGzip,
): Promise<Representation> {
  const rep = representation(body, contentType, cacheControl);
  if (rep.body.length < GZIP_MIN_BYTES) return rep;
  return { ...rep, gzipped: await gzip(rep.body) };
}

/** What of a request decides which answer a representation makes. */
export type RepresentationRequest = { method: string; headers: IncomingHttpHeaders };

/**
 * The answer a representation makes (the adapter writes it): 304 when `If-None-Match` names its ETag,
 * the gzipped form when the client accepts gzip. `headers` are added to every answer (the page's
 * security headers). On HEAD the body is still given: it sets Content-Length, and node:http sends no body.
 */
export function representationAnswer(
  request: RepresentationRequest,
  rep: Representation,
  headers: Readonly<Record<string, string>> = {},
): StageResponse {
  const gzip = rep.gzipped !== undefined && acceptsGzip(request.headers['accept-encoding']);
  const etag = gzip ? `${rep.etag.slice(0, -1)}-gz"` : rep.etag;
  const common: Record<string, string> = {
    ...headers,
    etag,
    'cache-control': rep.cacheControl,
    ...(rep.gzipped ? { vary: 'Accept-Encoding' } : {}),
  };
  if (matchesEtag(request.headers['if-none-match'], etag)) return { status: 304, headers: common };
  return {
    status: 200,
    headers: gzip ? { ...common, 'content-encoding': 'gzip' } : common,
    contentType: rep.contentType,
    body: gzip ? rep.gzipped! : rep.body,
  };
}

/** Whether an `If-None-Match` list names `etag` (weak comparison, RFC 9110 13.1.2), or is `*`. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/** Whether an `Accept-Encoding` header accepts gzip (listed, or `*`, with a q-value above 0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let accepted = false;
  for (const entry of acceptEncoding.toLowerCase().split(',')) {
    const [coding, ...params] = entry.split(';').map((part) => part.trim());
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (coding === 'gzip' || coding === 'x-gzip') return quality > 0;
    if (coding === '*') accepted = quality > 0;
  }
  return accepted;
}
