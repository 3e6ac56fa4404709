// Test helper: a TCP forwarder that can play a dead or hung server, to prove recovery over real sockets.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export type TcpProxy = {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /**
   * Cuts every current connection, then, until `resume()`:
   * `hold` (default) accepts new connections and never answers (a hung server);
   * `refuse` stops listening, so connecting fails at once (a stopped server).
   */
  pause(mode?: 'hold' | 'refuse'): Promise<void>;
  /** Forwards new connections again (held ones are cut: their clients gave up on them). */
  resume(): Promise<void>;
  close(): Promise<void>;
};

/**
 * Starts a forwarder from an ephemeral port on 127.0.0.1 to `target`.
 *
 * @example
 * const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
 * await proxy.pause(); // ... the server now looks hung
 * await proxy.resume();
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const forwarding = new Set<Socket>();
  const held = new Set<Socket>();
  let paused = false;

  const server = createServer((client) => {
    client.on('error', () => undefined);
    if (paused) {
      held.add(client);
      client.on('close', () => held.delete(client));
      return;
    }
    const upstream = connect(target.port, target.host);
    upstream.on('error', () => undefined);
    const cut = () => {
      client.destroy();
      upstream.destroy();
      forwarding.delete(client);
      forwarding.delete(upstream);
    };
    client.on('close', cut);
    upstream.on('close', cut);
    forwarding.add(client).add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const destroyAll = (sockets: Set<Socket>) => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };

  await listen(0);
  const port = (server.address() as AddressInfo).port;
  let refusing = false;

  return {
    port,
    async pause(mode = 'hold') {
      paused = true;
      destroyAll(forwarding);
      if (mode === 'refuse' && !refusing) {
        refusing = true;
        destroyAll(held);
        await stopListening();
      }
    },
    async resume() {
      paused = false;
      destroyAll(held);
      if (refusing) {
        refusing = false;
        await listen(port);
      }
    },
    async close() {
      destroyAll(forwarding);
      destroyAll(held);
      if (!refusing) await stopListening();
    },
  };
}
