// Test helper: an HTTP forwarder in front of a real device role that can play the ways a device fails the
// management system: refusing connections (stopped), or doing a deployment and losing its answer (the
// connection is cut after the device applied it, as a time-out or a network cut does).
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FrontMode = 'pass' | 'refuse' | 'lose-deploy-answers';

export type DeviceFront = {
  /** The front's URL on 127.0.0.1. */
  readonly url: string;
  /** How many deployment answers were lost so far. */
  readonly lostAnswers: number;
  set(mode: FrontMode): Promise<void>;
  close(): Promise<void>;
};

/** Headers a device call carries that the device needs (the token, the body's type). */
const FORWARDED = ['content-type', 'x-vendor-auth-token', 'authorization'];
const isDeploy = (request: IncomingMessage) => request.method === 'POST' && (request.url ?? '').startsWith('/mgmt/shared/appsvcs/declare');

/**
 * Starts a front for the device at `target` (its base URL), forwarding everything while in `pass` mode.
 *
 * @example
 * const front = await startDeviceFront(system.url('device'));
 * await front.set('lose-deploy-answers'); // the next deployment reaches the device, its answer does not come back
 */
export async function startDeviceFront(target: string): Promise<DeviceFront> {
  let mode: FrontMode = 'pass';
  let lostAnswers = 0;
  const sockets = new Set<Socket>();
  const server = createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(
        FORWARDED.flatMap((name) => (typeof request.headers[name] === 'string' ? [[name, request.headers[name]]] : [])),
      );
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${target}${request.url}`, { method: request.method!, headers, ...(body ? { body } : {}) });
      const text = Buffer.from(await answer.arrayBuffer());
      if (mode === 'lose-deploy-answers' && isDeploy(request)) {
        lostAnswers += 1;
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    } catch {
      // The client went away, or the device did: the connection ends without an answer.
      request.socket.destroy();
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const stopListening = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    get lostAnswers() {
      return lostAnswers;
    },
    async set(next) {
      if (next === mode) return;
      if (next === 'refuse') await stopListening();
      else if (mode === 'refuse') {
        server.listen(port, '127.0.0.1');
        await once(server, 'listening');
      }
      mode = next;
    },
    async close() {
      if (mode !== 'refuse') await stopListening();
      mode = 'refuse';
    },
  };
}
