// One answer of the reference pages (src/server/reference-pages.ts) made once and sent many times: its
// bytes, their gzip form, a strong ETag per form, its content type and caching; and the one writer of such
// answers, with HEAD, conditional GET (304) and gzip when the client accepts it.
import { createHash } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip as zlibGzip } from 'node:zlib';

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

/**
 * Writes a representation: 304 when `If-None-Match` names its ETag, the gzipped form when the client
 * accepts gzip, no body on HEAD. `headers` are added to every answer (the page's security headers).
 */
export function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  rep: Representation,
  headers: OutgoingHttpHeaders = {},
): void {
  const gzip = rep.gzipped !== undefined && acceptsGzip(req.headers['accept-encoding']);
  const etag = gzip ? `${rep.etag.slice(0, -1)}-gz"` : rep.etag;
  const common: OutgoingHttpHeaders = {
    ...headers,
    etag,
    'cache-control': rep.cacheControl,
    ...(rep.gzipped ? { vary: 'Accept-Encoding' } : {}),
  };
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    res.writeHead(304, common).end();
    return;
  }
  const body = gzip ? rep.gzipped! : rep.body;
  res.writeHead(200, {
    ...common,
    'content-type': rep.contentType,
    'content-length': body.length,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
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
