import type { Readable } from 'node:stream';
import type { Timers } from './timers.ts';

/**
 * Reads and drops what is left of a request body that was answered early, until the client has sent
 * it all, has gone, or `lingerMs` have passed. Closing a connection while the client still sends makes
 * the kernel answer with a reset, and a client that gets a reset may drop the answer it had received.
 *
 * @example
 * if (!req.complete) await drainWithin(req, systemTimers, 5000);
 * res.end();
 */
export function drainWithin(body: Readable, timers: Timers, lingerMs: number): Promise<void> {
  if (body.readableEnded || body.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      body.off('end', done).off('close', done);
      resolve();
    };
    const cancel = timers.after(lingerMs, done, { background: true });
    body.once('end', done).once('close', done);
    body.resume();
  });
}
