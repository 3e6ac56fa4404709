import type { PoolMember, PoolStatus } from '../../generated/health/types.gen.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { systemTimers, type Cancel, type Timers } from '../lib/timers.ts';
import { formatAddress, healthSendString, probeHealth, type MemberAddress, type ProbeResult } from './probe.ts';

export type MemberState = PoolMember['state'];

/** A pool member: where it listens and its `host:port` address (the name used in logs and status). */
export type Member = Readonly<MemberAddress & { address: string }>;

/** The seed's monitor settings (interface G), in milliseconds. */
export type MonitorSettings = {
  /** One probe per member every interval (seed: 5 s). */
  intervalMs?: number;
  /** A probe without a status line within this time marks the member down (seed: 16 s). */
  timeoutMs?: number;
  /** Healthy answers needed for this long before a member goes up (seed: 0, up on the first 200). */
  timeUntilUpMs?: number;
  /** The request text, sent as is to every member; by default the seed's send string with the member's Host. */
  send?: string;
};

export type StateChange = {
  pool: string;
  member: Member;
  from: MemberState;
  to: MemberState;
  /** HTTP status of the probe that caused the change; null when there was no answer. */
  status: number | null;
  reason: string;
};

export type PoolOptions = {
  name: string;
  members: readonly MemberAddress[];
  monitor?: MonitorSettings;
  clock: Clock;
  /** Where the monitor's interval and probe timeout come from (default: real timers). */
  timers?: Timers;
  /** How one member is probed (default: `probeHealth`, the seed's monitor over TCP). */
  probe?: typeof probeHealth;
  logger?: Logger;
  onStateChange?: (change: StateChange) => void;
};

export type Pool = {
  readonly name: string;
  readonly members: readonly Member[];
  /** The next member in rotation (`up` or `unchecked`), round robin; undefined when none is. */
  pick(): Member | undefined;
  /** The pool as `GET /gateway/pool` shows it (`PoolStatus` of specs/health.yaml). */
  status(): PoolStatus;
  /** How many times each member entered each state (for the state-change counter). */
  stateChanges(): { member: string; to: MemberState; count: number }[];
  /** Starts the monitor: every member is probed at once, then every interval. */
  start(): void;
  /** Stops the monitor; probes in flight are cancelled and their sockets closed. */
  stop(): Promise<void>;
};

type MemberRecord = {
  member: Member;
  state: MemberState;
  lastStatus?: number | null;
  reason?: string;
  lastChange?: string;
  lastProbe?: string;
  /** When the current run of healthy answers began (time-until-up). */
  healthySinceMs?: number;
  changes: Map<MemberState, number>;
  cancelTimer?: Cancel;
  inFlight?: { controller: AbortController; done: Promise<void> };
  /** The interval passed while a probe was still running: probe again as soon as it ends. */
  due: boolean;
};

const inRotation = (state: MemberState) => state !== 'down';

/**
 * A pool of members with its health monitor (interface G): each member is probed with the seed's
 * send string over raw TCP every interval, at most one probe in flight per member; HTTP 200 marks
 * it up (after time-until-up), anything else down. Members start `unchecked`, in rotation.
 *
 * @example
 * const pool = createPool({ name: 'mapping', members: [{ host: '127.0.0.1', port: 8081 }], clock: systemClock });
 * pool.start();
 * const member = pool.pick(); // undefined when every member is down
 * await pool.stop();
 */
export function createPool(options: PoolOptions): Pool {
  const intervalMs = options.monitor?.intervalMs ?? 5000;
  const timeoutMs = options.monitor?.timeoutMs ?? 16_000;
  const timeUntilUpMs = options.monitor?.timeUntilUpMs ?? 0;
  const send = options.monitor?.send;
  for (const [name, value] of Object.entries({ intervalMs, timeoutMs, timeUntilUpMs })) {
    if (!Number.isFinite(value) || value < 0 || (name !== 'timeUntilUpMs' && value === 0)) {
      throw new RangeError(
        `pool ${options.name}: monitor ${name} must be a ${name === 'timeUntilUpMs' ? 'non-negative' : 'positive'} number of milliseconds`,
      );
    }
  }
  const { clock, logger } = options;
  const timers = options.timers ?? systemTimers;
  const probeMember = options.probe ?? probeHealth;
  const records: MemberRecord[] = options.members.map((m) => ({
    member: Object.freeze({ host: m.host, port: m.port, address: formatAddress(m) }),
    state: 'unchecked',
    changes: new Map(),
    due: false,
  }));
  const members = Object.freeze(records.map((r) => r.member));
  let cursor = 0;
  let running = false;

  const changeState = (record: MemberRecord, to: MemberState, result: ProbeResult) => {
    const from = record.state;
    record.state = to;
    record.lastChange = clock.now().toISOString();
    record.changes.set(to, (record.changes.get(to) ?? 0) + 1);
    const reason = result.up ? 'HTTP status 200' : result.reason;
    const entry = { pool: options.name, member: record.member.address, from, to, reason };
    if (to === 'down') logger?.warn(entry, 'pool member down');
    else logger?.info(entry, 'pool member up');
    options.onStateChange?.({ pool: options.name, member: record.member, from, to, status: result.status, reason });
  };

  const apply = (record: MemberRecord, result: ProbeResult) => {
    record.lastProbe = clock.now().toISOString();
    record.lastStatus = result.status;
    if (!result.up) {
      record.healthySinceMs = undefined;
      record.reason = result.reason;
      if (record.state !== 'down') changeState(record, 'down', result);
      return;
    }
    if (record.state === 'up') return;
    record.healthySinceMs ??= clock.nowMs();
    if (clock.nowMs() - record.healthySinceMs >= timeUntilUpMs) {
      record.reason = undefined;
      changeState(record, 'up', result);
    }
  };

  const probe = (record: MemberRecord) => {
    // The next probe is due one interval after this one started, or as soon as it ends if it runs longer.
    record.cancelTimer = timers.after(intervalMs, () => {
      record.cancelTimer = undefined;
      if (record.inFlight) record.due = true;
      else probe(record);
    });
    const controller = new AbortController();
    const done = probeMember(record.member, { timeoutMs, send, signal: controller.signal, timers }).then((result) => {
      record.inFlight = undefined;
      if (!running) return;
      apply(record, result);
      if (record.due) {
        record.due = false;
        probe(record);
      }
    });
    record.inFlight = { controller, done };
  };

  return {
    name: options.name,
    members,
    pick() {
      for (let i = 0; i < records.length; i++) {
        const index = (cursor + i) % records.length;
        const record = records[index]!;
        if (inRotation(record.state)) {
          cursor = (index + 1) % records.length;
          return record.member;
        }
      }
      return undefined;
    },
    status() {
      const first = records[0]?.member;
      return {
        name: options.name,
        monitor: {
          interval: intervalMs / 1000,
          timeout: timeoutMs / 1000,
          timeUntilUp: timeUntilUpMs / 1000,
          receive: '200',
          send: send ?? healthSendString(first ?? { host: 'localhost', port: 80 }),
        },
        membersUp: records.filter((r) => inRotation(r.state)).length,
        members: records.map((r) => ({
          address: r.member.address,
          state: r.state,
          ...(r.lastStatus !== undefined ? { lastStatus: r.lastStatus } : {}),
          ...(r.state === 'down' && r.reason ? { reason: r.reason } : {}),
          ...(r.lastChange ? { lastChange: r.lastChange } : {}),
          ...(r.lastProbe ? { lastProbe: r.lastProbe } : {}),
        })),
      };
    },
    stateChanges() {
      return records.flatMap((r) => [...r.changes].map(([to, count]) => ({ member: r.member.address, to, count })));
    },
    start() {
      if (running) return;
      running = true;
      for (const record of records) if (!record.inFlight) probe(record);
    },
    async stop() {
      running = false;
      const pending: Promise<void>[] = [];
      for (const record of records) {
        record.cancelTimer?.();
        record.cancelTimer = undefined;
        record.due = false;
        if (record.inFlight) {
          record.inFlight.controller.abort();
          pending.push(record.inFlight.done);
        }
      }
      await Promise.all(pending);
    },
  };
}
