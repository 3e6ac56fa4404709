// The one writer of HTTP answers: the role adapter's (src/server/http-adapter.ts) and the device's virtual
// servers' (src/traffic/virtual-server.ts). Both write a head and a body (bytes, text or a stream) and
// close the connection after an early answer the same way. It lives in lib/ because both layers use it
// and neither may import the other.
import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { drainWithin } from './drain.ts';
import { canonicalHeaderName } from './header-case.ts';
import { isRelayedBody, type RelayedBody } from './relayed-body.ts';
import type { Timers } from './timers.ts';

/** How writing an answer ended: all of it, or cut by the `client` going away or by the `answer`'s streamed body failing. */
export type WriteOutcome = 'whole' | 'client' | 'answer';

/** How long an early answer waits for the rest of an unread request body before closing, on which timers. */
export type Linger = { timers: Timers; lingerMs: number };

/** An answer ready for the wire: everything in it is written as it is, but for the connection's own field. */
export type WireAnswer = {
  status: number;
  /** A reason phrase to write (a member's); replaced by the standard one when node:http would refuse it. */
  statusText?: string;
  /** Header fields: as received (`[name, value, ...]`, written in order and case), or by name. */
  headers: readonly string[] | Readonly<Record<string, string | readonly string[]>>;
  body?: string | Buffer | Readable | RelayedBody;
};

/** A reason phrase node:http writes as it is; any other is replaced by the standard one. */
const SAFE_REASON = /^[\t\x20-\x7e]*$/;

/**
 * Whether node:http can write every field of a member's answer as it is (checked before passing an
 * answer on: a field it refuses makes the answer a 502, not a crash mid-write).
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

/**
 * Writes an answer and resolves `whole` once it is all written, or who cut it. When the request's body
 * was not read to its end (an early answer: a 401, 413 or 415, a member's, or none to read it), the answer
 * carries `Connection: close`; before closing, the rest of the body is read and dropped for up to
 * `lingerMs`, because a client still sending when the socket closes gets a reset and may lose the answer
 * it had received. Throws, before writing anything, when node:http refuses the status or a field.
 */
export async function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: WireAnswer, linger: Linger): Promise<WriteOutcome> {
  const bodyUnread = !req.complete;
  writeHead(res, answer, bodyUnread);
  const { body } = answer;
  if (isRelayedBody(body)) {
    // A member's answer, written into `res` as it arrives; the relay watches the client going away itself.
    const outcome = await body.relay(res);
    if (outcome !== 'whole') {
      res.destroy();
      return outcome;
    }
    return finish(req, res, linger);
  }
  if (!(body instanceof Readable) && !bodyUnread) {
    // The common case in one write: head and body together (a separate end() costs a second syscall).
    if (!req.readableEnded) req.resume();
    res.end(body);
    return 'whole';
  }
  // Which side failed first: the client closing, or the streamed body erroring (the other follows).
  let cutBy: 'client' | 'answer' | undefined;
  const onClose = () => (cutBy ??= 'client');
  res.once('close', onClose);
  try {
    if (body instanceof Readable) {
      body.once('error', () => (cutBy ??= 'answer'));
      await pipeline(body, res, { end: false });
    } else if (body !== undefined) res.write(body);
  } catch {
    // The answer has started: the only way to tell the client it is incomplete is to cut the connection.
    res.destroy();
    return cutBy ?? 'answer';
  } finally {
    res.off('close', onClose);
  }
  return finish(req, res, linger);
}

/** Ends an answer whose body is written: after the rest of an unread request body, read and dropped for a while. */
async function finish(req: IncomingMessage, res: ServerResponse, linger: Linger): Promise<WriteOutcome> {
  // Checked again: the client may have finished sending while a streamed answer was written.
  if (!req.complete) await drainWithin(req, linger.timers, linger.lingerMs);
  else if (!req.readableEnded) req.resume();
  // The client may have gone while the rest of its body was awaited.
  const gone = res.destroyed;
  res.end();
  return gone ? 'client' : 'whole';
}

/**
 * The status line and fields, with `Connection: close` when the request body is left unread. Fields by
 * name are written with their names in conventional case (`Location`, `WWW-Authenticate`: clients that
 * match names case-sensitively find them); a field list as received is written in its own case.
 */
function writeHead(res: ServerResponse, answer: WireAnswer, closeAfter: boolean): void {
  const reason = answer.statusText !== undefined && SAFE_REASON.test(answer.statusText) ? answer.statusText : undefined;
  let fields: (string | readonly string[])[];
  if (isFieldList(answer.headers)) {
    fields = closeAfter ? [...answer.headers, 'Connection', 'close'] : (answer.headers as string[]);
  } else {
    fields = [];
    for (const name in answer.headers) {
      // `connection` is left out when the writer closes: one Connection field, not two.
      if (closeAfter && name.length === 10 && name.toLowerCase() === 'connection') continue;
      fields.push(canonicalHeaderName(name), answer.headers[name]!);
    }
    if (closeAfter) fields.push('Connection', 'close');
  }
  res.writeHead(answer.status, reason, fields as string[]);
}

const isFieldList = (headers: WireAnswer['headers']): headers is readonly string[] => Array.isArray(headers);
