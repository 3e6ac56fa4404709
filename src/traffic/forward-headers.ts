import { endToEndHeaders } from './hop-by-hop.ts';

/**
 * The headers a member receives: the client's end-to-end fields unchanged (Host included: the
 * member sees the name the client asked for), without Expect (the server in front has already
 * answered `100 Continue`), `X-Forwarded-For` with the client's address appended, and this proxy's
 * `Via` entry after any the request had (RFC 9110 7.6.3; how a loop back here is seen: hop-marker.ts).
 *
 * @example
 * upstreamHeaders(['Host', 'charts.example', 'Connection', 'keep-alive'], '::ffff:192.0.2.1', '1.1 portolan-3f9a0c11d2e4')
 * // ['Host', 'charts.example', 'X-Forwarded-For', '192.0.2.1', 'Via', '1.1 portolan-3f9a0c11d2e4']
 */
export function upstreamHeaders(rawHeaders: readonly string[], clientAddress: string | undefined, via?: string): string[] {
  const headers: string[] = [];
  const forwardedFor: string[] = [];
  const seen = new Set<string>();
  const fields = endToEndHeaders(rawHeaders);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    const value = fields[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'x-forwarded-for') forwardedFor.push(value);
    else if (lower === 'expect') continue;
    // node:http keeps a repeated Host or Content-Length in rawHeaders; the first is the one it used.
    else if ((lower === 'host' || lower === 'content-length') && seen.has(lower)) continue;
    else {
      seen.add(lower);
      headers.push(name, value);
    }
  }
  const client = clientAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (client) forwardedFor.push(client);
  if (forwardedFor.length > 0) headers.push('X-Forwarded-For', forwardedFor.join(', '));
  if (via) headers.push('Via', via);
  return headers;
}
