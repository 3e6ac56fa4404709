import type { ErrorCode } from '../lib/errors.ts';

/** The two limits on a request head: its target (414) and its header section (431), each judged alone. */
export type HeadLimits = { maxUrlLength: number; maxHeaderBytes: number };

/**
 * Header fields a request may have. node:http drops the fields past its `maxHeadersCount` silently, so it is
 * set one above this and a head that reaches it is refused (431) rather than served with fields the proxy and
 * the limiter never saw.
 */
export const MAX_HEADER_FIELDS = 2000;
export const PARSER_HEADERS_COUNT = MAX_HEADER_FIELDS + 1;

/** Slack for what node counts in the target but the 414 check does not (an absolute-form target's scheme and host). */
const PARSER_SLACK = 1024;

/**
 * node:http's `maxHeaderSize`: it counts the request target and the header fields together, so it is set
 * above the sum of our two limits and only stops heads that are over at least one of them by far; our own
 * checks (`headRefusal`) judge everything below it, the target first.
 */
export const parserHeadLimit = (limits: HeadLimits) => limits.maxUrlLength + limits.maxHeaderBytes + PARSER_SLACK;

/** The bytes of a header section as sent: each field's name, `: `, value and CRLF. */
export function headerSectionBytes(rawHeaders: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i < rawHeaders.length; i++) bytes += rawHeaders[i]!.length + 2;
  return bytes;
}

export type HeadRefusal = { code: ErrorCode; message: string };

/**
 * Why a head that node:http parsed is over a limit, or undefined: the target is judged before the headers
 * (a long URL is 414 even when its headers are long too). `target` is the request target as checked
 * everywhere else (origin-form).
 */
export function headRefusal(limits: HeadLimits, target: string, rawHeaders: readonly string[]): HeadRefusal | undefined {
  if (target.length > limits.maxUrlLength) return uriTooLong(limits);
  if (rawHeaders.length > 2 * MAX_HEADER_FIELDS)
    return { code: 'headersTooLarge', message: `The request has more than ${MAX_HEADER_FIELDS} header fields.` };
  if (headerSectionBytes(rawHeaders) > limits.maxHeaderBytes) return headersTooLarge(limits);
  return undefined;
}

/**
 * Which limit a head that overflowed node:http's parser broke, from the packet the parser failed in and
 * where: when the request line had not ended where the parser stopped, or ended past the target limit, the
 * target (414); otherwise the headers (431). The head is taken to start after the last blank line before
 * that point (an earlier request on the same connection); a request line split over several packets whose
 * last piece is short is judged by that piece (best effort, for heads over both limits together).
 */
export function overflowRefusal(limits: HeadLimits, packet: Buffer | undefined, bytesParsed: number | undefined): HeadRefusal {
  if (!packet) return headersTooLarge(limits);
  const stop = Math.min(packet.length, Math.max(0, bytesParsed ?? packet.length));
  const seen = packet.subarray(0, stop);
  const previousEnd = seen.lastIndexOf('\n\r\n');
  const headStart = previousEnd === -1 ? 0 : previousEnd + 3;
  const lineEnd = seen.indexOf(0x0a, headStart);
  // The request line is `method SP target SP HTTP/x.y CRLF`: a method and version take at most ~30 bytes.
  if (lineEnd === -1 || lineEnd - headStart > limits.maxUrlLength + 32) return uriTooLong(limits);
  return headersTooLarge(limits);
}

const uriTooLong = (limits: HeadLimits): HeadRefusal => ({
  code: 'uriTooLong',
  message: `The request target is longer than ${limits.maxUrlLength} characters.`,
});
const headersTooLarge = (limits: HeadLimits): HeadRefusal => ({
  code: 'headersTooLarge',
  message: `The request headers are larger than the limit (${limits.maxHeaderBytes} bytes).`,
});
