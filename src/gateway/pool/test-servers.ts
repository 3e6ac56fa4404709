// Test helpers: real servers on ephemeral ports that play pool members, closed when the test ends.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createFakeClock } from '../../lib/clock.ts';
import { portolanError } from '../../lib/errors.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { createErrorRenderers } from '../../interfaces/error-shapes.ts';
import type { ForwardContext, ForwardResult, Proxy } from './proxy.ts';

async function listen<S extends Server | ReturnType<typeof createNetServer>>(t: TapTest, server: S, sockets: Set<Socket>) {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

/** A raw TCP server: `onSocket` decides what a "member" says, byte for byte. */
export async function startRawServer(t: TapTest, onSocket: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  const port = await listen(t, server, sockets);
  return { host: '127.0.0.1', port, sockets, connections: () => connections };
}

/**
 * A node:http member with a switchable `/health` (200 or another status); every other request goes
 * to `handler` (by default 200 naming the member). Counts requests and TCP connections.
 */
export async function startHttpMember(
  t: TapTest,
  name: string,
  handler?: (req: IncomingMessage, res: ServerResponse) => void,
) {
  const sockets = new Set<Socket>();
  let healthStatus = 200;
  let connections = 0;
  const received: IncomingMessage[] = [];
  const server = createHttpServer((req, res) => {
    if (req.url === '/health') {
      res.writeHead(healthStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: healthStatus === 200 ? 'healthy' : 'unhealthy' }));
      return;
    }
    received.push(req);
    if (handler) return handler(req, res);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(name);
  });
  server.on('connection', () => connections++);
  const port = await listen(t, server, sockets);
  return {
    name,
    host: '127.0.0.1',
    port,
    received,
    connections: () => connections,
    setHealth(status: number) {
      healthStatus = status;
    },
  };
}

/** A port nothing listens on: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 10 ms until it is true or `ms` have passed; resolves with the last result. */
export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

const gatewayRenderer = createErrorRenderers(createFakeClock())['rate-limit'];

/** The gateway's own 502/504 answer, rendered as the gateway renders every error. */
export const renderGatewayError: ForwardContext['renderError'] = (code, message) => {
  return gatewayRenderer(portolanError(code, message), { headers: {} });
};

/** A node:http server that passes every request to `proxy`, as the gateway's dispatcher does. */
export async function startGateway(t: TapTest, proxy: Proxy) {
  const sockets = new Set<Socket>();
  const results: ForwardResult[] = [];
  let next = 0;
  const server = createHttpServer(async (req, res) => {
    results.push(await proxy.forward(req, res, { requestId: `req-${++next}`, renderError: renderGatewayError }));
  });
  const port = await listen(t, server, sockets);
  return { host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, results };
}
