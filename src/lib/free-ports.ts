import { createServer } from 'node:net';

/**
 * `count` ports the OS says are free on 127.0.0.1 now, all different: each is held until all are
 * chosen (chosen one after another, a port just closed could be handed out twice). Still only a
 * snapshot: another program may take one before it is used.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))));
  }
}
