import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { isWritable, writeAnswer } from '../lib/answer-writer.ts';
import { createHopMarker, type HopMarker } from './hop-marker.ts';
import type { RuleSession } from './irules/types.ts';
import type { Pool } from './pool.ts';
import { createProxy, type ProxyAnswer, type ReverseProxy } from './proxy.ts';
import { type Ending, type Forward, jsonError, requestStep, responseStep } from './rule-steps.ts';
import { type ListenerRules, type RouteRules, clipped, cutConnection, routeRules, ruleConnection } from './service-rules.ts';
import {
  createServiceEvents,
  type ConnectionEnds,
  type RequestFailure,
  type ServiceEventHooks,
  type ServiceEvents,
} from './service-events.ts';

export type VirtualServerOptions = {
  /** The service's name in logs and traces (`/Tenant/Application/service`). */
  name: string;
  address: string;
  port: number;
  pool: Pool;
  /** As the gateway's proxy: how long a member may make no progress (default 30 s) and its keep-alive connections (64). */
  upstreamTimeoutMs?: number;
  connectionsPerMember?: number;
  /** How long `close()` waits for requests in flight before cutting their connections (default 5 s). */
  closeGraceMs?: number;
  /** How long an early answer waits for the rest of an unread request body before closing (default 5 s). */
  lingerMs?: number;
  clock: Clock;
  timers?: Timers;
  logger: Logger;
  hooks?: ServiceEventHooks;
  /** This traffic manager's `Via` marker (the data plane's, shared by its listeners; default: one of its own). */
  hop?: HopMarker;
  /** The service's rules (service-rules.ts), run on its connections, requests and answers; none: traffic goes straight to the pool. */
  rules?: ListenerRules;
};

export type VirtualServer = {
  readonly address: string;
  readonly port: number;
  /** Binds address:port; rejects with the bind error (EADDRINUSE...) leaving nothing open. */
  listen(): Promise<AddressInfo>;
  /** Sends the next requests to another pool under another name; requests in flight finish where they are. */
  serve(next: { name: string; pool: Pool; rules?: ListenerRules }): void;
  /** Stops accepting, lets requests in flight finish (cut after the grace), closes idle connections. */
  close(): Promise<void>;
};

/** Where requests go now: the service's name (logs, traces), the proxy over its pool, what it records. */
type Route = { name: string; proxy: ReverseProxy; events: ServiceEvents; rules?: RouteRules };

/**
 * A client connection's ends (kept: a closed socket forgets them) and its bytes already told in an
 * earlier request's record, so that each request counts its own.
 */
type ConnectionRecord = { ends: ConnectionEnds; read: number; written: number; rules?: { route: Route; session: RuleSession } };

const NO_MEMBER = 'No pool member is available.';
/**
 * One listener of a deployed service: every request goes to the next member of the pool in rotation,
 * through the same proxy as the gateway's (keep-alive to members, bodies streamed both ways,
 * hop-by-hop fields dropped, X-Forwarded-For appended). Without a member in rotation it answers 503,
 * when the member fails 502 or 504, each as `{"code":...,"message":...}`.
 *
 * @example
 * const server = createVirtualServer({ name: '/T/A/web', address: '127.0.0.1', port: 10080, pool, clock, logger });
 * await server.listen();
 * await server.close();
 */
export function createVirtualServer(options: VirtualServerOptions): VirtualServer {
  const { clock, logger } = options;
  const timers = options.timers ?? systemTimers;
  const hooks = options.hooks ?? {};
  const linger = { timers, lingerMs: options.lingerMs ?? 5000 };
  const hop = options.hop ?? createHopMarker();
  const proxyOf = (pool: Pool) =>
    createProxy({
      pool,
      upstreamTimeoutMs: options.upstreamTimeoutMs ?? 30_000,
      connectionsPerMember: options.connectionsPerMember ?? 64,
      logger,
      timers,
      hop,
    });
  const routeTo = (name: string, pool: Pool, rules?: ListenerRules): Route => {
    const proxy = proxyOf(pool);
    const events = createServiceEvents(name, logger, hooks);
    if (!rules) return { name, proxy, events };
    return { name, proxy, events, rules: routeRules(name, rules, { clock, logger, ownPool: pool, ownProxy: proxy, proxyOf }) };
  };
  let route = routeTo(options.name, options.pool, options.rules);
  // Proxies of earlier routes, closing once their requests are done.
  const retiring = new Set<Promise<void>>();
  const connections = new WeakMap<Socket, ConnectionRecord>();
  let closing: Promise<void> | undefined;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error, service: route.name }, 'virtual server request failed');
      res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    const ends = endsOf(socket);
    const events = route.events;
    const record: ConnectionRecord = { ends, read: 0, written: 0 };
    connections.set(socket, record);
    events.connectionStarted(ends);
    socket.once('close', () => events.connectionClosed(ends));
    if (!route.rules?.compiled.handles('CLIENT_ACCEPTED')) return;
    const outcome = sessionOf(record, route).run('CLIENT_ACCEPTED', { connection: ruleConnection(socket) }, route.rules.budget);
    if (outcome.kind === 'reject' || outcome.kind === 'drop') cutConnection(socket, outcome.kind);
    else if (outcome.kind === 'error') {
      // No request to answer yet: the connection is reset, as the real device does on a rule's error.
      route.events.ruleFailed({ connection: ends, event: 'CLIENT_ACCEPTED', rule: outcome.rule, message: clipped(outcome.message) });
      cutConnection(socket, 'reject');
    }
  });

  /** The connection's rule session on `current`'s rules (a new one once the service's rules changed). */
  function sessionOf(record: ConnectionRecord, current: Route): RuleSession {
    if (record.rules?.route !== current) record.rules = { route: current, session: current.rules!.session() };
    return record.rules.session;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = clock.nowMs();
    // Captured once: a switch to another pool mid-request leaves this request where it started.
    const current = route;
    const target = originForm(req.url ?? '/');
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
      // Closing: the connection this answer kept open is idle now, and is closed with the others.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    const connection = connections.get(req.socket) ?? { ends: endsOf(req.socket), read: 0, written: 0 };

    let ending: Ending | undefined =
      target === undefined
        ? { status: 400, failure: 'bad_target', answer: jsonError(400, 'The request target must be a path or an absolute URL.') }
        : undefined;
    let forward: Forward = { method: req.method ?? 'GET', url: target ?? '/', rawHeaders: req.rawHeaders, proxy: current.proxy };
    // A service without rules skips every step below but the exchange (CompiledRules.handles: only events some rule handles run).
    const rules = current.rules;
    const report = (event: string, rule: string, message: string) =>
      current.events.ruleFailed({ connection: connection.ends, event, rule, message });
    if (!ending && rules?.compiled.handles('HTTP_REQUEST')) {
      const step = requestStep(rules, sessionOf(connection, current), req, forward, report);
      if ('ending' in step) ending = step.ending;
      else forward = step.forward;
    }

    const answer: ProxyAnswer | undefined = ending
      ? undefined
      : await forward.proxy.exchange({
          method: forward.method,
          url: forward.url,
          rawHeaders: forward.rawHeaders,
          ...(req.socket.remoteAddress ? { clientAddress: req.socket.remoteAddress } : {}),
          body: hasBody(req) ? req : null,
          signal: gone.signal,
        });
    if (answer?.kind === 'answer' && isWritable(answer.headers) && rules?.compiled.handles('HTTP_RESPONSE'))
      ending = responseStep(rules, sessionOf(connection, current), req, answer, report);
    // While closing, each answer ends its connection: a keep-alive client moves on to the new listener.
    if (closing) res.shouldKeepAlive = false;
    let status: number;
    let failure: RequestFailure | undefined;
    if (ending) {
      [status, failure] = [ending.status, ending.failure];
      if ('cut' in ending) cutConnection(req.socket, ending.cut);
      else {
        const outcome = await writeAnswer(req, res, ending.answer, linger);
        if (outcome !== 'whole' && !failure) failure = outcome === 'client' ? 'client_closed' : 'answer_cut';
      }
    } else if (answer === undefined) {
      throw new Error('no answer and no ending');
    } else if (answer.kind === 'answer' && isWritable(answer.headers)) {
      status = answer.status;
      // The member's status line and fields unchanged (its reason phrase too, even an empty one), body streamed.
      const outcome = await writeAnswer(req, res, answer, linger);
      if (outcome !== 'whole') failure = outcome === 'client' ? 'client_closed' : 'answer_cut';
    } else if (answer.kind === 'cancelled') {
      [status, failure] = [499, 'client_closed'];
    } else {
      const [code, reason, message] = failureOf(answer);
      [status, failure] = [code, reason];
      await writeAnswer(req, res, jsonError(status, message), linger);
    }

    const [bytesIn, bytesOut] = [req.socket.bytesRead - connection.read, req.socket.bytesWritten - connection.written];
    [connection.read, connection.written] = [req.socket.bytesRead, req.socket.bytesWritten];
    const path = (target ?? req.url ?? '').split('?')[0]!;
    current.events.requestEnded({
      connection: connection.ends,
      method: req.method ?? '',
      path,
      status,
      member: ending?.member ?? answer?.member,
      failure,
      bytesIn,
      bytesOut,
      ms: clock.nowMs() - started,
    });
  }

  return {
    address: options.address,
    port: options.port,
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.once('error', onError);
        server.listen({ host: options.address, port: options.port, exclusive: true }, () => {
          server.off('error', onError);
          server.on('error', (error) => logger.error({ err: error, service: route.name }, 'virtual server error'));
          resolve(server.address() as AddressInfo);
        });
      });
    },
    serve(next) {
      const previous = route;
      route = routeTo(next.name, next.pool, next.rules);
      const closed: Promise<void> = Promise.all([previous.proxy.close(), previous.rules?.close()])
        .then(() => undefined)
        .finally(() => retiring.delete(closed));
      retiring.add(closed);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        const cut = timers.after(options.closeGraceMs ?? 5000, () => server.closeAllConnections());
        server.close(() => {
          cut();
          resolve();
        });
        server.closeIdleConnections();
      }).then(async () => {
        await Promise.all([route.proxy.close(), route.rules?.close(), ...retiring]);
      });
      return closing;
    },
  };
}

/** What the client is answered when no member gave an answer that can be passed on. */
function failureOf(answer: Exclude<ProxyAnswer, { kind: 'cancelled' }>): [number, RequestFailure, string] {
  if (answer.kind === 'answer') {
    answer.body.destroy();
    return [502, 'member_failed', `pool member ${answer.member} sent an answer that cannot be passed on (invalid header field)`];
  }
  if (answer.loop) return [502, 'loop_detected', answer.message];
  // The proxy names no member only when the pool had none in rotation to pick.
  if (answer.member === undefined) return [503, 'no_member', NO_MEMBER];
  if (answer.code === 'gatewayTimeout') return [504, 'member_timeout', answer.message];
  return [502, 'member_failed', answer.message];
}

/** The request target in origin-form (an absolute-form target reduced to its path); undefined for `*` and the like. */
function originForm(target: string): string | undefined {
  if (target.startsWith('/')) return target;
  const match = /^https?:\/\/[^/?#]*(.*)$/i.exec(target);
  if (!match) return undefined;
  return match[1] === '' || match[1]!.startsWith('?') ? `/${match[1]}` : match[1]!;
}

/** Whether the request carries a body at all (a declared length above 0, or chunked transfer). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? Number(length) > 0 : req.headers['transfer-encoding'] !== undefined;
}

const endsOf = (socket: Socket): ConnectionEnds => ({
  clientAddress: socket.remoteAddress ?? '',
  clientPort: socket.remotePort ?? 0,
  localAddress: socket.localAddress ?? '',
  localPort: socket.localPort ?? 0,
});
