import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { drainWithin } from '../lib/drain.ts';
import type { Timers } from '../lib/timers.ts';

/** How writing an answer ended: all of it, or cut by the client going away or by the member's body failing. */
export type WriteOutcome = 'whole' | 'client' | 'answer';

export type Linger = { timers: Timers; lingerMs: number };

/** A member's answer as the proxy hands it over: end-to-end fields only, body streamed. */
export type MemberAnswer = { status: number; statusText: string; headers: readonly string[]; body: Readable };

/** A reason phrase node:http writes as it is; any other is replaced by the standard one. */
const SAFE_REASON = /^[\t\x20-\x7e]*$/;

/**
 * Whether node:http can write every field of a member's answer as it is (the same check as the
 * gateway's pass-on stage: a field it refuses makes the answer a 502, not a crash mid-write).
 */
export function isWritable(fields: readonly string[]): boolean {
  try {
    for (let i = 0; i < fields.length; i += 2) {
      validateHeaderName(fields[i]!);
      validateHeaderValue(fields[i]!, fields[i + 1] ?? '');
    }
    return true;
  } catch {
    return false;
  }
}

/** Streams a member's answer to the client, status line and fields unchanged but for the connection's own. */
export function writeMemberAnswer(req: IncomingMessage, res: ServerResponse, answer: MemberAnswer, linger: Linger): Promise<WriteOutcome> {
  return writeAnswer(req, res, linger, (closeAfter) => {
    const fields = closeAfter ? [...answer.headers, 'Connection', 'close'] : [...answer.headers];
    res.writeHead(answer.status, SAFE_REASON.test(answer.statusText) ? answer.statusText : undefined, fields);
    return answer.body;
  });
}

/** The data plane's own answer (no member, or none answered): `{"code":status,"message":...}` as JSON. */
export function writeJsonError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  linger: Linger,
): Promise<WriteOutcome> {
  const payload = JSON.stringify({ code: status, message });
  return writeAnswer(req, res, linger, (closeAfter) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      ...(closeAfter ? { connection: 'close' } : {}),
    });
    return payload;
  });
}

/**
 * Writes an answer and resolves with how it ended. A request whose body was not read to its end (the
 * member answered early, or there was no member to read it) gets its answer with `Connection: close`;
 * the rest of the body is then read and dropped for up to `lingerMs` before the connection closes,
 * because a client still sending when the socket closes gets a reset and may lose the answer.
 */
async function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  linger: Linger,
  head: (closeAfter: boolean) => Readable | string,
): Promise<WriteOutcome> {
  const bodyUnread = !req.complete;
  const body = head(bodyUnread);
  let cutBy: 'client' | 'answer' | undefined;
  const onClose = () => (cutBy ??= 'client');
  res.once('close', onClose);
  try {
    if (typeof body === 'string') res.write(body);
    else {
      body.once('error', () => (cutBy ??= 'answer'));
      await pipeline(body, res, { end: false });
    }
  } catch {
    // The answer has started: the only way to tell the client it is incomplete is to cut the connection.
    res.destroy();
    return cutBy ?? 'answer';
  } finally {
    res.off('close', onClose);
  }
  if (!req.complete) await drainWithin(req, linger.timers, linger.lingerMs);
  else if (!req.readableEnded) req.resume();
  // The client may have gone while the rest of its body was awaited.
  const gone = res.destroyed;
  res.end();
  return gone ? 'client' : 'whole';
}
