// A body passed on as it arrives: the proxy writes a member's answer straight into the client's response,
// chunk by chunk, with no stream between them (a Readable, a Transform and a pipeline per request cost the
// gateway more than the bare node:http proxy it is measured against). The answer writer
// (src/lib/answer-writer.ts) relays it; whoever needs a stream (the in-process MSW handlers, tests) turns it
// into one with `relayedToReadable`.
import { Readable } from 'node:stream';

/** How a relay ended: all of it written, or cut by the `client` going away or by the `answer`'s source failing. */
export type RelayOutcome = 'whole' | 'client' | 'answer';

/** Where a relayed body is written: a node:http ServerResponse, or any Writable. */
export type RelaySink = {
  write(chunk: Buffer): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed: boolean;
};

const RELAYED = Symbol('portolan.relayedBody');

/** A body that is written into its sink as it arrives, honouring the sink's backpressure. */
export abstract class RelayedBody {
  readonly [RELAYED] = true;
  /**
   * Writes the body into `sink` (once) and resolves how it ended; it does not end the sink. A sink that
   * closes first cuts the source.
   */
  abstract relay(sink: RelaySink): Promise<RelayOutcome>;
  /** Gives the body up: its source is cut (a body nobody will relay must be destroyed). */
  abstract destroy(reason?: Error): void;
  /** Why the source failed, once the relay ended `answer`. */
  abstract readonly failure: Error | undefined;
}

export const isRelayedBody = (body: unknown): body is RelayedBody =>
  typeof body === 'object' && body !== null && (body as { [RELAYED]?: true })[RELAYED] === true;

/**
 * The body as a Readable stream, for a consumer that reads streams (a fetch Response, a test): it ends when
 * the body is whole and errors when its source fails; destroying it cuts the source.
 *
 * @example
 * const stream = relayedToReadable(answer.body);
 * for await (const chunk of stream) bytes += chunk.length;
 */
export function relayedToReadable(body: RelayedBody): Readable {
  const drainListeners = new Set<() => void>();
  const closeListeners = new Set<() => void>();
  const stream = new Readable({
    read() {
      for (const listener of [...drainListeners]) listener();
    },
    destroy(error, done) {
      for (const listener of [...closeListeners]) listener();
      done(error);
    },
  });
  const sink: RelaySink = {
    write: (chunk) => stream.push(chunk),
    once(event, listener) {
      const listeners = event === 'drain' ? drainListeners : closeListeners;
      const once = () => {
        listeners.delete(once);
        listener();
      };
      (once as { original?: () => void }).original = listener;
      listeners.add(once);
    },
    off(event, listener) {
      const listeners = event === 'drain' ? drainListeners : closeListeners;
      for (const entry of listeners) if ((entry as { original?: () => void }).original === listener) listeners.delete(entry);
    },
    get destroyed() {
      return stream.destroyed;
    },
  };
  body.relay(sink).then((outcome) => {
    if (outcome === 'whole') stream.push(null);
    else if (outcome === 'answer') stream.destroy(body.failure ?? new Error('the answer was cut by its source'));
  });
  return stream;
}
