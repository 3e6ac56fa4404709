import { connect } from 'node:net';
import { systemTimers, type Timers } from '../lib/timers.ts';

/** A pool member's address. */
export type MemberAddress = { host: string; port: number };

/** What one health probe saw: up only on HTTP status 200 (the seed's receive string `200`). */
export type ProbeResult = { up: true; status: 200 } | { up: false; status: number | null; reason: string };

export type ProbeOptions = {
  /** The whole exchange (connect, send, status line) must finish within this time. */
  timeoutMs: number;
  /** The request text; the seed's send string for the member when absent. */
  send?: string;
  /** Cancels the probe (the pool stopping); the socket is destroyed at once. */
  signal?: AbortSignal;
  /** Where the timeout's time comes from (default: real timers). */
  timers?: Timers;
};

/** An answer longer than this without a line end is not HTTP: stop reading it. */
const MAX_STATUS_LINE = 8192;
const STATUS_LINE = /^HTTP\/\d(?:\.\d)? (\d{3})(?:[ \r\n]|$)/;

/** `host:port`, with an IPv6 literal in brackets (the Host header and the pool's member address). */
export function formatAddress({ host, port }: MemberAddress): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The seed's monitor send string for one member: `GET /health HTTP/1.1` with a Host header and
 * `Connection: close`, ended by a blank line.
 *
 * @example
 * healthSendString({ host: '127.0.0.1', port: 8081 })
 * // 'GET /health HTTP/1.1\r\nHost: 127.0.0.1:8081\r\nConnection: close\r\n\r\n'
 */
export function healthSendString(member: MemberAddress): string {
  return `GET /health HTTP/1.1\r\nHost: ${formatAddress(member)}\r\nConnection: close\r\n\r\n`;
}

const NET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
};

/** Judges what arrived so far; undefined while the status line may still be incomplete. */
function judge(received: string, ended: boolean): ProbeResult | undefined {
  const lineEnd = received.indexOf('\n');
  if (lineEnd < 0 && !ended && received.length < MAX_STATUS_LINE) return undefined;
  const match = STATUS_LINE.exec(lineEnd < 0 ? received : received.slice(0, lineEnd + 1));
  if (!match) {
    return {
      up: false,
      status: null,
      reason: received.length === 0 ? 'connection closed without an answer' : 'no HTTP status line in the answer',
    };
  }
  const status = Number(match[1]);
  return status === 200 ? { up: true, status: 200 } : { up: false, status, reason: `HTTP status ${status}` };
}

/**
 * Probes one member over a raw TCP connection, the way a load balancer's HTTP monitor does: sends
 * the send string, reads until the status line is complete (or the connection ends), and judges the
 * status code. Never rejects; the socket is always destroyed when the probe ends.
 *
 * @example
 * const result = await probeHealth({ host: '127.0.0.1', port: 8081 }, { timeoutMs: 16_000 });
 * if (!result.up) console.log(result.reason); // e.g. 'HTTP status 503', 'connection refused'
 */
export function probeHealth(member: MemberAddress, options: ProbeOptions): Promise<ProbeResult> {
  return new Promise((resolve) => {
    if (options.signal?.aborted) return resolve({ up: false, status: null, reason: 'probe cancelled' });
    const socket = connect({ host: member.host, port: member.port });
    let received = '';
    let done = false;
    const finish = (result: ProbeResult) => {
      if (done) return;
      done = true;
      cancelTimeout();
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(result);
    };
    const onAbort = () => finish({ up: false, status: null, reason: 'probe cancelled' });
    const cancelTimeout = (options.timers ?? systemTimers).after(options.timeoutMs, () =>
      finish({ up: false, status: null, reason: `no answer within ${options.timeoutMs} ms` }),
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });

    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(options.send ?? healthSendString(member), 'latin1'));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const result = judge(received, false);
      if (result) finish(result);
    });
    socket.on('end', () => finish(judge(received, true)!));
    socket.on('close', () => finish(judge(received, true)!));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after a complete status line still counts: the member did answer.
      const answered = judge(received, false);
      finish(
        answered ?? { up: false, status: null, reason: NET_REASONS[error.code ?? ''] ?? `connection failed (${error.code ?? 'error'})` },
      );
    });
  });
}
