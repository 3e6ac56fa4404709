import type { Readable } from 'node:stream';
import type { Timers } from '../lib/timers.ts';

/** The body is longer than the limit (declared or counted). */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`request body over ${limit} bytes`);
    this.limit = limit;
  }
}

/** The body did not arrive whole within its time limit. */
export class BodyTimeout extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`request body not received within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Reads a whole request body, refusing (BodyTooLarge) past `limit` bytes, counted as they arrive, and
 * (BodyTimeout) when it has not all arrived `deadline.ms` after reading began: a client trickling a
 * body holds no socket for long. Undefined for an empty body. The declared length was checked before
 * (body-policy.ts). What is left unread after a refusal is the adapter's to drop (it closes the connection).
 */
export function readBody(
  stream: Readable | undefined,
  limit: number,
  deadline?: { timers: Timers; ms: number },
): Promise<Buffer | undefined> {
  if (!stream) return Promise.resolve(undefined);
  // Events, not `for await`: leaving an async iterator early destroys the stream, and with it the
  // socket, so a 413 or 408 could no longer be answered.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      cancel?.();
      stream.pause();
      outcome();
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) settle(() => reject(new BodyTooLarge(limit)));
      else chunks.push(bytes);
    };
    const onEnd = () =>
      settle(() => resolve(chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    const onError = (error: Error) => settle(() => reject(error));
    const onClose = () => settle(() => reject(new Error('the client closed the connection before sending the whole body')));
    const cancel = deadline?.timers.after(deadline.ms, () => settle(() => reject(new BodyTimeout(deadline.ms))), { background: true });
    stream.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}
