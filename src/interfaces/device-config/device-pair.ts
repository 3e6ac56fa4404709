import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Cancel, Timers } from '../../lib/timers.ts';
import type { LeaseHold, LeaseStore } from './device-lease.ts';

export type PairRole = 'active' | 'standby';

/** What failover-status and the standby's answers say: this process's role, and where the active one is. */
export type PairStatus = { role: PairRole; activeUrl: string | undefined };

export type DevicePairOptions = {
  lease: LeaseStore;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** This process's identity as a lease holder (unique per process start). */
  holder: string;
  /** The management URL this process is reached on (PORTOLAN_DEVICE_ADVERTISE_URL, default its own listener). */
  url: () => string;
  /** A lease lapses this long after its last renewal; the holder renews every quarter of it. */
  leaseMs: number;
  /**
   * Whether the process a holder id names is certainly gone (lease-holder.ts): at start, its lease is then
   * taken at once instead of after it lapses, so that a lone device restarted after a crash does not wait.
   * Default: never certain.
   */
  holderGone?: (holder: string) => boolean;
  /** Becomes active: bind the data plane from the saved configuration, resume queued tasks. */
  onActive(): Promise<void>;
  /** No longer active: unbind the data plane, stop running tasks (at once). */
  onStandby(): Promise<void>;
  /** After each renewal while active (cheap follow-ups: applying settings another process saved). */
  onRenewed?(): Promise<void>;
};

const BACKGROUND = { background: true } as const;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * One device process of an active/standby pair on one store. The active one holds the lease (device-lease.ts)
 * and renews it every leaseMs/4; the standby one looks every leaseMs/4 and takes the lease once it is free or
 * lapsed. A holder that finds its lease taken, or cannot renew it before it could lapse, steps down at once
 * (onStandby) before another can take it. Transitions run one at a time, in order.
 *
 * @example
 * const pair = createDevicePair({ lease, clock, timers, logger, holder, url, leaseMs: 4000, onActive, onStandby });
 * await pair.start(); // active at once when nobody holds the lease
 * pair.status(); // { role: 'active', activeUrl: 'http://127.0.0.1:8100' }
 */
export function createDevicePair(options: DevicePairOptions) {
  const { lease, clock, timers, logger, holder, leaseMs } = options;
  const everyMs = Math.max(1, Math.floor(leaseMs / 4));
  let hold: LeaseHold | undefined;
  let heldUntilMs = 0;
  let activeUrl: string | undefined;
  let stopped = false;
  let timer: Cancel = () => undefined;
  let ticking: Promise<void> = Promise.resolve();
  /** The transitions (onActive, onStandby), chained: each starts when the previous one settled. */
  let transitions: Promise<void> = Promise.resolve();

  const becomeActive = (generation: number, untilMs: number): Promise<void> => {
    hold = { holder, generation };
    heldUntilMs = untilMs;
    activeUrl = options.url();
    logger.info({ generation }, 'this device process is now the active one of its pair');
    const run = transitions.then(async () => {
      if (hold?.generation !== generation) return; // stepped down again meanwhile
      await options.onActive();
    });
    transitions = run.catch(() => undefined);
    return run;
  };

  /** `nextActive`: the URL of the process that holds the lease now, when known. */
  const becomeStandby = (why: string, nextActive?: string): Promise<void> => {
    if (!hold) return transitions;
    hold = undefined;
    activeUrl = nextActive;
    logger.warn({ reason: why }, 'this device process stepped down to standby');
    transitions = transitions
      .then(() => options.onStandby())
      .catch((error: unknown) => logger.error({ err: error }, 'stepping down failed'));
    return transitions;
  };

  /** Takes the lease when free or lapsed (or its holder is gone); true when taken. */
  async function tryTake(first: boolean): Promise<boolean> {
    const now = clock.nowMs();
    const current = await lease.read();
    let from: number | undefined;
    if (current && current.holder !== holder && current.expiresMs > now) {
      activeUrl = current.url;
      if (!first || !options.holderGone?.(current.holder)) return false;
      from = current.generation;
      logger.warn({ previous: current.url }, 'the process that held the active lease is gone: taking over at once');
    }
    const generation = await lease.take(holder, options.url(), now, now + leaseMs, from);
    if (generation === undefined) {
      activeUrl = (await lease.read())?.url;
      return false;
    }
    const running = becomeActive(generation, now + leaseMs);
    if (first) await running;
    else running.catch((error: unknown) => stepDownAfter(error));
    return true;
  }

  /** A failed activation (the saved configuration could not be loaded): the lease goes to the other process. */
  function stepDownAfter(error: unknown) {
    logger.error({ err: error }, 'becoming active failed; the lease is given up');
    const released = hold;
    void becomeStandby('becoming active failed').then(() => (released ? lease.release(released) : undefined));
  }

  async function tick(): Promise<void> {
    if (stopped) return;
    const now = clock.nowMs();
    if (!hold) {
      await tryTake(false);
      return;
    }
    const mine = hold;
    try {
      if (await lease.renew(mine, options.url(), now + leaseMs)) {
        if (hold === mine) heldUntilMs = now + leaseMs;
        await options.onRenewed?.().catch((error: unknown) => logger.warn({ err: error }, 'a follow-up of the lease renewal failed'));
      } else {
        const current = await lease.read().catch(() => undefined);
        await becomeStandby('another device process holds the active lease', current?.url);
      }
    } catch (error) {
      // The store does not answer: step down before the lease could lapse and another take it.
      logger.warn({ err: messageOf(error) }, 'renewing the active lease failed');
      if (clock.nowMs() + everyMs >= heldUntilMs) await becomeStandby('the active lease could not be renewed');
    }
  }

  function schedule() {
    if (stopped) return;
    timer = timers.after(
      everyMs,
      () => {
        ticking = tick()
          .catch((error: unknown) => logger.warn({ err: messageOf(error) }, 'looking at the active lease failed'))
          .finally(schedule);
      },
      BACKGROUND,
    );
  }

  return {
    /** Takes the lease if it is free (or its holder gone) and becomes active before resolving; standby otherwise. */
    async start(): Promise<void> {
      try {
        await tryTake(true);
      } finally {
        schedule();
      }
    },
    isActive: () => hold !== undefined,
    /** The fencing token of this process's writes as the active one; undefined on the standby. */
    hold: () => hold,
    status: (): PairStatus => ({ role: hold ? 'active' : 'standby', activeUrl }),
    /** Stops looking; the active one steps down (onStandby) and then gives the lease up for the other to take at once. */
    async stop(): Promise<void> {
      stopped = true;
      timer();
      await ticking;
      const released = hold;
      await becomeStandby('the process is stopping');
      if (released)
        await lease.release(released).catch((error: unknown) => logger.warn({ err: messageOf(error) }, 'releasing the lease failed'));
    },
  };
}

export type DevicePair = ReturnType<typeof createDevicePair>;
