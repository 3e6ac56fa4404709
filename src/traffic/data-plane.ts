import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PoolStatus } from '../../generated/health/types.gen.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Timers } from '../lib/timers.ts';
import { createPool, type MonitorSettings, type Pool, type PoolOptions } from './pool.ts';
import { createHopMarker } from './hop-marker.ts';
import { createQlogTrace, type QlogTrace } from './qlog.ts';
import type { RuleBudget } from './irules/types.ts';
import type { DataPlaneLevel } from './service-events.ts';
import { DEFAULT_RULE_BUDGET, type ListenerRules, type RulePoolSpec, type ServiceRules } from './service-rules.ts';
import { bindFailureReason, listenPlan } from './virtual-address.ts';
import { createVirtualServer, type VirtualServer } from './virtual-server.ts';

/** A deployed service as the data plane runs it (a `Service_HTTP` and its pool). */
export type VirtualServiceSpec = {
  /** `/Tenant/Application/service` */
  key: string;
  /** As declared, route domain included (`127.0.0.1%2`). */
  addresses: string[];
  port: number;
  pool: RulePoolSpec;
  /** The service's rules, compiled (service-rules.ts); none: every request goes to the pool. */
  rules?: ServiceRules;
};

export type ApplyFailure = { key: string; address: string; port: number; reason: string };
export type ApplyOutcome = { ok: true } | { ok: false; failures: ApplyFailure[] };

/** One virtual address of a running service: bound with its URL, or not with the reason. */
export type AddressStatus = { address: string; port: number; bound: boolean; reason?: string; url?: string };
export type ServiceStatus = { addresses: AddressStatus[]; pool: PoolStatus };

export type DataPlaneOptions = {
  /** Added to every virtual port, so that port 80 needs no privilege (80 -> 10080). */
  portOffset: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** Where the qlog trace is written. */
  dataDir: string;
  /** The `http` monitor's settings (default: the seed's, every 5 s, 16 s timeout). */
  monitor?: MonitorSettings;
  probe?: PoolOptions['probe'];
  upstreamTimeoutMs?: number;
  connectionsPerMember?: number;
  closeGraceMs?: number;
  /** Most listeners at once, all services together (default 256); past it a service fails to apply. */
  maxListeners?: number;
  /** Each rule run at most (default 10 000 steps, 50 ms); past it the request is answered 500. */
  ruleBudget?: RuleBudget;
};

export type DataPlane = {
  /** Runs exactly `specs`: all of them or, when a listener cannot be bound, none of the changes. */
  apply(specs: readonly VirtualServiceSpec[]): Promise<ApplyOutcome>;
  /** Per service key: its addresses and its pool. */
  status(): Record<string, ServiceStatus>;
  setQlogging(on: boolean): Promise<void>;
  setAccessLogging(on: boolean): void;
  setEventLevel(level: DataPlaneLevel): void;
  /** Closes every listener (requests in flight finish), stops the monitors, ends the trace. */
  close(): Promise<void>;
};

/** `rulePools`: the other pools its rules may pick, by key. */
type Running = { fingerprint: string; pool: Pool; rulePools: Pool[]; addresses: AddressStatus[] };

/** A changed or new service, ready to switch to: its pool, the listeners it takes over and the ones bound for it. */
type Staged = {
  spec: VirtualServiceSpec;
  pool: Pool;
  rules: ListenerRules | undefined;
  rulePools: Pool[];
  addresses: AddressStatus[];
  takenOver: string[];
  fresh: { address: string; url: string; server: VirtualServer }[];
};

/** This process runs one data-plane worker; its trace is trace0.qlog. */
const WORKER = 0;

const fingerprintOf = (spec: VirtualServiceSpec) =>
  JSON.stringify(spec.rules ? [spec.addresses, spec.port, spec.pool, spec.rules.fingerprint] : [spec.addresses, spec.port, spec.pool]);

/**
 * The device's data plane: the deployed services' listeners, each balancing round robin over its
 * pool, with the same pool, monitor and proxy as the gateway. Listeners are keyed by the address and
 * port they are bound to, so a changed service on the same address keeps its listener and only its
 * pool is switched; an unchanged service is not touched at all. No request in flight is dropped.
 *
 * @example
 * const dataPlane = createDataPlane({ portOffset: 10_000, clock, timers, logger, dataDir });
 * await dataPlane.apply([{ key: '/T/A/web', addresses: ['127.0.0.1'], port: 80, pool: { key: '/T/A/p', members, monitor: 'http' } }]);
 * dataPlane.status()['/T/A/web'].addresses[0].url; // 'http://127.0.0.1:10080'
 */
export function createDataPlane(options: DataPlaneOptions): DataPlane {
  const { clock, timers, logger } = options;
  const maxListeners = options.maxListeners ?? 256;
  const services = new Map<string, Running>();
  const listeners = new Map<string, VirtualServer>();
  const draining = new Set<Promise<void>>();
  let trace: QlogTrace | undefined;
  let accessLog = false;
  let eventLevel: DataPlaneLevel = 'Critical';
  let closed = false;
  const hooks = { trace: () => trace, accessLog: () => accessLog, eventLevel: () => eventLevel };
  // One Via marker for all its listeners: a loop from one service through another and back is seen too.
  const hop = createHopMarker();

  // One change at a time: each waits for the one before, whatever its outcome.
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };

  const drain = (server: VirtualServer) => {
    const closing = server.close().finally(() => draining.delete(closing));
    draining.add(closing);
  };

  const poolOf = (name: string, members: RulePoolSpec['members']) =>
    createPool({
      name,
      members,
      ...(options.monitor ? { monitor: options.monitor } : {}),
      ...(options.probe ? { probe: options.probe } : {}),
      clock,
      timers,
      logger,
    });

  /** The pools the service's rules may pick, by name, made once per pool (its own pool is the one it has). */
  function rulesOf(spec: VirtualServiceSpec, pool: Pool): { rules: ListenerRules | undefined; rulePools: Pool[] } {
    if (!spec.rules) return { rules: undefined, rulePools: [] };
    const byKey = new Map<string, Pool>();
    const pools = new Map<string, Pool>();
    for (const [name, plan] of Object.entries(spec.rules.pools)) {
      let picked = plan.key === spec.pool.key ? pool : byKey.get(plan.key);
      if (!picked) byKey.set(plan.key, (picked = poolOf(plan.key, plan.members)));
      pools.set(name, picked);
    }
    const rules: ListenerRules = {
      compiled: spec.rules.compiled,
      pools,
      dataGroups: new Map(Object.entries(spec.rules.dataGroups)),
      budget: options.ruleBudget ?? DEFAULT_RULE_BUDGET,
    };
    return { rules, rulePools: [...byKey.values()] };
  }

  function stage(spec: VirtualServiceSpec, claimed: Map<string, string>, failures: ApplyFailure[]): Staged {
    const pool = poolOf(spec.pool.key || spec.key, spec.pool.members);
    const staged: Staged = { spec, pool, ...rulesOf(spec, pool), addresses: [], takenOver: [], fresh: [] };
    for (const address of spec.addresses) {
      const plan = listenPlan(address, spec.port, options.portOffset);
      if (!plan.bindable) {
        staged.addresses.push({ address, port: plan.port, bound: false, reason: plan.reason });
        continue;
      }
      const owner = claimed.get(plan.url);
      if (owner !== undefined) {
        failures.push({ key: spec.key, address, port: plan.port, reason: `address in use by ${owner}` });
        continue;
      }
      // Each listener holds a socket and a pool: a bound on them keeps one declaration from using up the
      // process's file descriptors, which the management interface needs too.
      if (claimed.size >= maxListeners) {
        failures.push({ key: spec.key, address, port: plan.port, reason: `too many listeners on this device (at most ${maxListeners})` });
        continue;
      }
      claimed.set(plan.url, spec.key);
      staged.addresses.push({ address, port: plan.port, bound: true, url: plan.url });
      if (listeners.has(plan.url)) staged.takenOver.push(plan.url);
      else {
        const server = createVirtualServer({
          name: spec.key,
          address: plan.host,
          port: plan.port,
          pool,
          ...(staged.rules ? { rules: staged.rules } : {}),
          clock,
          timers,
          logger,
          hooks,
          hop,
          ...(options.upstreamTimeoutMs ? { upstreamTimeoutMs: options.upstreamTimeoutMs } : {}),
          ...(options.connectionsPerMember ? { connectionsPerMember: options.connectionsPerMember } : {}),
          ...(options.closeGraceMs ? { closeGraceMs: options.closeGraceMs } : {}),
        });
        staged.fresh.push({ address, url: plan.url, server });
      }
    }
    return staged;
  }

  async function applyNow(specs: readonly VirtualServiceSpec[]): Promise<ApplyOutcome> {
    if (closed) throw new Error('the data plane is closed');
    const next = new Map(specs.map((spec) => [spec.key, spec]));
    const changed = [...next.values()].filter((spec) => services.get(spec.key)?.fingerprint !== fingerprintOf(spec));
    const changedKeys = new Set(changed.map((spec) => spec.key));
    // The running versions of removed and changed services.
    const retired = [...services].filter(([key]) => !next.has(key) || changedKeys.has(key));
    // Which service each bound address:port belongs to once applied: unchanged services keep theirs.
    const claimed = new Map<string, string>();
    for (const [key, running] of services) {
      if (!next.has(key) || changedKeys.has(key)) continue;
      for (const address of running.addresses) if (address.url) claimed.set(address.url, key);
    }
    const failures: ApplyFailure[] = [];
    const staged = changed.map((spec) => stage(spec, claimed, failures));

    // Every new listener is bound before anything running is touched: a failure changes nothing.
    const fresh = staged.flatMap((s) => s.fresh.map((f) => ({ ...f, key: s.spec.key })));
    const binds = await Promise.allSettled(fresh.map((f) => f.server.listen()));
    binds.forEach((bind, i) => {
      if (bind.status === 'rejected')
        failures.push({
          key: fresh[i]!.key,
          address: fresh[i]!.address,
          port: fresh[i]!.server.port,
          reason: bindFailureReason(bind.reason),
        });
    });
    if (failures.length > 0) {
      await Promise.all(fresh.map((f) => f.server.close()));
      return { ok: false, failures };
    }

    for (const { spec, pool, rules, rulePools, addresses, takenOver, fresh: bound } of staged) {
      for (const url of takenOver) listeners.get(url)!.serve({ name: spec.key, pool, ...(rules ? { rules } : {}) });
      for (const { url, server } of bound) listeners.set(url, server);
      // A pool is monitored only where it serves: a service with no bound address (not loopback) sends
      // no probes to its members, so a declaration naming real hosts costs them nothing here.
      const serving = addresses.some((a) => a.bound);
      if (spec.pool.monitor === 'http' && serving) pool.start();
      const monitored = new Set(Object.values(spec.rules?.pools ?? {}).flatMap((p) => (p.monitor === 'http' ? [p.key] : [])));
      for (const other of rulePools) if (serving && monitored.has(other.name)) other.start();
      services.set(spec.key, { fingerprint: fingerprintOf(spec), pool, rulePools, addresses });
    }
    for (const [key] of retired) if (!next.has(key)) services.delete(key);
    for (const [url, server] of listeners) {
      if (claimed.has(url)) continue;
      listeners.delete(url);
      // Stops accepting at once; its requests in flight finish in the background (close() waits for them).
      drain(server);
    }
    await Promise.all(retired.flatMap(([, running]) => [running.pool, ...running.rulePools].map((pool) => pool.stop())));
    return { ok: true };
  }

  return {
    apply: (specs) => serialised(() => applyNow(specs)),
    status: () =>
      Object.fromEntries(
        [...services].map(([key, running]) => [key, { addresses: running.addresses.map((a) => ({ ...a })), pool: running.pool.status() }]),
      ),
    setQlogging: (on) =>
      serialised(async () => {
        if (on && !trace && !closed) {
          await mkdir(options.dataDir, { recursive: true });
          const file = join(options.dataDir, `trace${WORKER}.qlog`);
          trace = createQlogTrace(file, {
            clock,
            title: 'portolan data plane',
            onError: (error) => logger.error({ err: error, file }, 'qlog trace cannot be written'),
          });
        } else if (!on && trace) {
          const ending = trace;
          trace = undefined;
          await ending.close();
        }
      }),
    setAccessLogging(on) {
      accessLog = on;
    },
    setEventLevel(level) {
      eventLevel = level;
    },
    close: () =>
      serialised(async () => {
        closed = true;
        for (const server of listeners.values()) drain(server);
        listeners.clear();
        await Promise.all([...services.values()].flatMap((running) => [running.pool, ...running.rulePools].map((pool) => pool.stop())));
        services.clear();
        await Promise.all(draining);
        await trace?.close();
        trace = undefined;
      }),
  };
}
