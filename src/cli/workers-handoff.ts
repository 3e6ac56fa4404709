// A connection node:cluster's primary was handing to a worker when that worker died is closed, not left
// open. On Linux the primary accepts each connection and sends it to a worker (`newconn`), keeping its own
// copy until the worker says it accepted it; the one a worker receives as it dies is never answered for, so
// the primary's copy stayed open and its client waited forever (https://github.com/nodejs/node-v0.x-archive/pull/7928).
// The primary sends one connection at a time per worker and listening port, so the last one sent on each
// port is the only one that can be in flight: at the worker's exit, those are closed (one already accepted
// was closed by the primary then, and closing it again does nothing). The message shape is node:cluster's
// own: a shape it no longer has leaves this doing nothing.
import type { Worker } from 'node:cluster';

type ClusterMessage = { cmd?: unknown; act?: unknown; key?: unknown };
type Closable = { close(): void };

const isHandoff = (message: unknown): message is ClusterMessage =>
  typeof message === 'object' &&
  message !== null &&
  (message as ClusterMessage).cmd === 'NODE_CLUSTER' &&
  (message as ClusterMessage).act === 'newconn';

/** From now on, the connections last handed to `worker` (one per port) are closed when it exits. */
export function closeHandoffsOnExit(worker: Worker): void {
  const child = worker.process;
  const lastSent = new Map<unknown, Closable>();
  const send = child.send.bind(child) as (...args: unknown[]) => boolean;
  child.send = ((...args: unknown[]) => {
    const [message, handle] = args;
    if (isHandoff(message) && typeof (handle as Closable | undefined)?.close === 'function') lastSent.set(message.key, handle as Closable);
    return send(...args);
  }) as typeof child.send;
  worker.on('exit', () => {
    for (const handle of lastSent.values()) handle.close();
    lastSent.clear();
  });
}
