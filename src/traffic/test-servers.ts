// Test helpers: real servers on ephemeral ports that play pool members, closed when the test ends.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createFakeClock } from '../lib/clock.ts';
import type { Timers } from '../lib/timers.ts';
import { createLogger } from '../lib/logger.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { renderGatewayError as renderInGatewayShape } from '../interfaces/rate-limit/error-shape.ts';
import { createPool, type PoolOptions } from './pool.ts';
import { createProxy, type ReverseProxy } from './proxy.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { loadConfig } from '../app/config.ts';
import { createMetrics } from '../lib/metrics.ts';
import { createRoleServer } from '../server/http-adapter.ts';
import { passOnStage } from '../gateway/gateway-stages.ts';

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
export async function startHttpMember(t: TapTest, name: string, handler?: (req: IncomingMessage, res: ServerResponse) => void) {
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

/** How one request through the gateway ended, from its log line: status, member, and who cut it. */
export type GatewayResult = { status: number; member?: string; aborted?: 'client' | 'upstream' };

/**
 * The gateway's listener as production runs it, with only its last stage: the one HTTP adapter and the
 * pass-on stage over `proxy`, on `timers` (the proxy's fake clock, so nothing waits on real time).
 * `results` is read from the adapter's request log lines.
 */
export async function startGateway(t: TapTest, proxy: ReverseProxy, timers?: Timers) {
  const logs = captureLogs('info');
  const server = createRoleServer({
    role: 'gateway',
    stages: [passOnStage({ proxy, renderError: renderInGatewayShape, logger: logs.logger })],
    renderError: renderInGatewayShape,
    limits: loadConfig({}),
    logger: logs.logger,
    metrics: createMetrics(),
    ...(timers ? { timers } : {}),
  });
  const address = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close(0));
  const results: GatewayResult[] = [];
  const read = () => {
    results.length = 0;
    for (const line of logs.lines) {
      const entry = JSON.parse(line) as { msg: string; status: number; member?: string; cut?: 'client' | 'answer' };
      if (entry.msg !== 'request') continue;
      results.push({
        status: entry.status,
        ...(entry.member ? { member: entry.member } : {}),
        ...(entry.cut ? { aborted: entry.cut === 'answer' ? 'upstream' : 'client' } : {}),
      });
    }
    return results;
  };
  return {
    host: '127.0.0.1',
    port: address.port,
    url: `http://127.0.0.1:${address.port}`,
    /** The requests answered so far (read from the log on each access). */
    get results() {
      return read();
    },
  };
}

/**
 * A gateway in front of `members`: pool (monitor not started unless asked), proxy, node:http
 * listener, all on one fake clock: no timeout fires unless the test advances `clock`, however slow
 * the machine.
 */
export async function startProxiedGateway(
  t: TapTest,
  members: PoolOptions['members'],
  options: { upstreamTimeoutMs?: number; connectionsPerMember?: number; monitor?: PoolOptions['monitor'] } = {},
) {
  const clock = createFakeClock();
  const pool = createPool({ name: 'mapping', members, clock, timers: clock, ...(options.monitor ? { monitor: options.monitor } : {}) });
  const logger = createLogger({ level: 'silent' });
  const proxy = createProxy({
    pool,
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? 30_000,
    connectionsPerMember: options.connectionsPerMember ?? 4,
    logger,
    timers: clock,
  });
  t.teardown(() => proxy.close());
  t.teardown(() => pool.stop());
  const gateway = await startGateway(t, proxy, clock);
  return Object.assign(gateway, { clock, pool, proxy });
}
