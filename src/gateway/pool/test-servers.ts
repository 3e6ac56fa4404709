// Test helpers: real servers on ephemeral ports that play pool members, closed when the test ends.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createFakeClock } from '../../lib/clock.ts';
import { portolanError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/logger.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { renderGatewayError as renderInGatewayShape } from '../../interfaces/rate-limit/error-shape.ts';
import { createPool, type PoolOptions } from './pool.ts';
import { createProxy, type ForwardContext, type ForwardResult, type Proxy } from './proxy.ts';

export async function listen<S extends Server | ReturnType<typeof createNetServer>>(t: TapTest, server: S, sockets: Set<Socket>) {
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
 * to `handler` (by default 200 naming the member). Counts requests, TCP connections and the bytes
 * that reached it.
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
  let bytesOfClosedSockets = 0;
  server.on('connection', (socket: Socket) => {
    connections++;
    socket.on('close', () => (bytesOfClosedSockets += socket.bytesRead));
  });
  const port = await listen(t, server, sockets);
  return {
    name,
    host: '127.0.0.1',
    port,
    received,
    connections: () => connections,
    /** Bytes read from every connection so far, request heads included. */
    bytesReceived: () => bytesOfClosedSockets + [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0),
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

/**
 * Polls `check` every 10 ms until it is true, `tries` times at most; resolves with the last result.
 * For what real sockets do (a connection closed, a request received): it waits on the condition, not
 * for a time, and the bound only keeps a broken test from hanging.
 */
export async function waitFor(check: () => boolean, tries = 1000): Promise<boolean> {
  for (let i = 0; !check(); i++) {
    if (i >= tries) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** The gateway's own 502/504 answer, rendered as the gateway renders every error. */
export const renderGatewayError: ForwardContext['renderError'] = (code, message) => {
  return renderInGatewayShape(portolanError(code, message), { headers: {} });
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

/**
 * A gateway in front of `members`: pool (monitor not started unless asked), proxy, node:http
 * listener, all on one fake clock: no timeout fires unless the test advances `clock`, however slow
 * the machine.
 */
export async function startProxiedGateway(t: TapTest, members: PoolOptions['members'], options: { upstreamTimeoutMs?: number; connectionsPerMember?: number; monitor?: PoolOptions['monitor'] } = {}) {
  const clock = createFakeClock();
  const pool = createPool({ name: 'mapping', members, clock, timers: clock, ...(options.monitor ? { monitor: options.monitor } : {}) });
  const logger = createLogger({ level: 'silent' });
  const proxy = createProxy({ pool, upstreamTimeoutMs: options.upstreamTimeoutMs ?? 30_000, connectionsPerMember: options.connectionsPerMember ?? 4, logger, timers: clock });
  t.teardown(() => proxy.close());
  t.teardown(() => pool.stop());
  return { clock, pool, proxy, ...(await startGateway(t, proxy)) };
}
