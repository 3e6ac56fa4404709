import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `port` (0: a free one) and resolves with the address, or rejects (port taken). */
export function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting connections, lets in-flight requests finish (idle keep-alive connections close at
 * once), and cuts whatever is still open after `timeoutMs`.
 */
export function closeServer(server: Server, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
