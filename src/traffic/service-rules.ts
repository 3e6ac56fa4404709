import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { isWritable, type WireAnswer } from '../lib/answer-writer.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { CompiledRules, DataGroup, HeaderList, RuleBudget, RuleConnection, RuleSession, RunOutcome } from './irules/types.ts';
import type { Pool } from './pool.ts';
import type { ReverseProxy } from './proxy.ts';

/** The budget of one rule run when the device's settings give none (10 000 steps, 50 ms). */
export const DEFAULT_RULE_BUDGET: RuleBudget = { maxSteps: 10_000, maxMs: 50 };

/** A pool as a deployed service's spec gives it (data-plane.ts). */
export type RulePoolSpec = { key: string; members: { host: string; port: number }[]; monitor: 'http' | null };

/**
 * A deployed service's rules as the deployer hands them to the data plane: compiled once, the pools a
 * rule may pick by each name it may use (`web_pool`, `/T/A/web_pool`) and the tenant's data groups.
 */
export type ServiceRules = {
  compiled: CompiledRules;
  pools: Readonly<Record<string, RulePoolSpec>>;
  dataGroups: Readonly<Record<string, DataGroup>>;
  /** Stands for the rules' texts, pools and data groups: when it changes, the service is changed. */
  fingerprint: string;
};

/** What a virtual server runs the rules with: the pools by name made (data-plane.ts), and the budget of each run. */
export type ListenerRules = {
  compiled: CompiledRules;
  pools: ReadonlyMap<string, Pool>;
  dataGroups: ReadonlyMap<string, DataGroup>;
  budget: RuleBudget;
};

/** A service's rules on one route of its virtual server: a session per connection, a proxy per pool a rule may pick. */
export type RouteRules = {
  readonly compiled: CompiledRules;
  session(): RuleSession;
  /** The proxy over the pool a rule picked by that name; undefined when the name is none of the service's. */
  proxyFor(pool: string): ReverseProxy | undefined;
  readonly budget: RuleBudget;
  close(): Promise<void>;
};

/**
 * The rules of one route: the environment every session shares (the pools' names, the data groups, the
 * device's log, the clock) and one proxy per pool a rule may pick (the service's own pool's when it is one).
 */
export function routeRules(
  service: string,
  rules: ListenerRules,
  deps: { clock: Clock; logger: Logger; ownPool: Pool; ownProxy: ReverseProxy; proxyOf: (pool: Pool) => ReverseProxy },
): RouteRules {
  const proxies = new Map<Pool, ReverseProxy>([[deps.ownPool, deps.ownProxy]]);
  const byName = new Map<string, ReverseProxy>();
  for (const [name, pool] of rules.pools) {
    let proxy = proxies.get(pool);
    if (!proxy) proxies.set(pool, (proxy = deps.proxyOf(pool)));
    byName.set(name, proxy);
  }
  const environment = {
    pools: new Set(rules.pools.keys()),
    dataGroups: rules.dataGroups,
    log: (rule: string, line: string) => deps.logger.info({ service, rule, line: clipped(line, 1024) }, 'rule log'),
    nowMs: () => deps.clock.nowMs(),
  };
  return {
    compiled: rules.compiled,
    budget: rules.budget,
    session: () => rules.compiled.session(environment),
    proxyFor: (pool) => byName.get(pool),
    async close() {
      await Promise.all([...proxies].filter(([pool]) => pool !== deps.ownPool).map(([, proxy]) => proxy.close()));
    },
  };
}

/** `[name, value, name, value...]` (node:http's rawHeaders) as the rules' header list. */
export function headerList(raw: readonly string[]): HeaderList {
  const list: HeaderList = [];
  for (let i = 0; i + 1 < raw.length; i += 2) list.push([raw[i]!, raw[i + 1]!]);
  return list;
}

/** The rules' header list as a flat list again. */
export const rawHeaders = (list: HeaderList): string[] => list.flat();

/** The connection's ends as a rule sees them. */
export const ruleConnection = (socket: Socket): RuleConnection => ({
  clientAddress: socket.remoteAddress ?? '',
  clientPort: socket.remotePort ?? 0,
  localAddress: socket.localAddress ?? '',
  localPort: socket.localPort ?? 0,
});

/** Fields the device writes itself in a rule's answer: the length of its body and the connection's own. */
const OWN_FIELDS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * A rule's own answer (`HTTP::respond`, `HTTP::redirect`) ready for the wire: its fields in its order but
 * the length (written for its body) and the connection's fields (the writer's, as for every own answer);
 * undefined when node:http cannot write a field or the status as given.
 */
export function ruleAnswer(outcome: Extract<RunOutcome, { kind: 'respond' }>): WireAnswer | undefined {
  const fields = rawHeaders(outcome.headers.filter(([name]) => !OWN_FIELDS.has(name.toLowerCase())));
  if (!Number.isInteger(outcome.status) || outcome.status < 100 || outcome.status > 999 || !isWritable(fields)) return undefined;
  return { status: outcome.status, headers: [...fields, 'Content-Length', String(Buffer.byteLength(outcome.body))], body: outcome.body };
}

/** Ends a connection as a rule said: `reject` resets it (RST), `drop` closes it without an answer. */
export function cutConnection(socket: Socket, how: 'reject' | 'drop'): void {
  if (how === 'reject') socket.resetAndDestroy();
  else socket.destroy();
}

/** The HTTP version of a request as a rule reads it (`1.1`, `1.0`). */
export const versionOf = (req: IncomingMessage) => req.httpVersion;

/** A text written to the log at most `max` characters long. */
export const clipped = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);
