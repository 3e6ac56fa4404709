/**
 * Header fields that belong to one connection, not to the message (RFC 9110 section 7.6.1), plus
 * Proxy-Connection, which some clients still send. A proxy never passes them on.
 */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade']);

/**
 * The end-to-end fields of a flat raw header list (`[name, value, name, value, ...]`, as node:http's
 * `rawHeaders` and undici's raw response headers are): every hop-by-hop field removed, and every
 * field the Connection header names. Order, case and repeated fields (Set-Cookie) are kept.
 *
 * @example
 * endToEndHeaders(['Connection', 'close, X-Hop', 'X-Hop', '1', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'])
 * // ['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']
 */
export function endToEndHeaders(raw: readonly string[]): string[] {
  // The fields Connection names, if any (usually none, or keep-alive): no set is built for the usual answer.
  let named: Set<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) {
      const field = token.trim().toLowerCase();
      if (field) (named ??= new Set()).add(field);
    }
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && !named?.has(lower)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}
