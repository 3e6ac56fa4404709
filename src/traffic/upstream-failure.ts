/** The gateway's answers when a member gives none: 502, or 504 when it was too slow. */
export type ProxyErrorCode = 'badGateway' | 'gatewayTimeout';

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  // undici's "other side closed": the member closed the connection before its answer.
  UND_ERR_SOCKET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  UND_ERR_CLOSED: 'proxy closed',
  UND_ERR_DESTROYED: 'proxy closed',
};

/** The error codes on an error and its causes (undici wraps the socket's error). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') codes.push(e.code);
  }
  return codes;
}

/**
 * How a failed upstream request (no answer started) is told to the client: 504 when the member
 * did not answer in time, 502 otherwise, with a message naming the member and the cause (an error
 * code, never the error's own text, which may carry request details).
 */
export function upstreamFailure(error: unknown, member: string, upstreamTimeoutMs: number): { code: ProxyErrorCode; message: string } {
  const codes = codesOf(error);
  if (codes.some((c) => TIMEOUTS.has(c))) {
    return { code: 'gatewayTimeout', message: `pool member ${member} did not answer within ${upstreamTimeoutMs} ms` };
  }
  const known = codes.find((c) => REASONS[c]);
  const reason = known ? REASONS[known]! : `connection failed (${codes[0] ?? 'unknown error'})`;
  return { code: 'badGateway', message: `pool member ${member} did not answer (${reason})` };
}
