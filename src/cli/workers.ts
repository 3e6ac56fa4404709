// The primary of `portolan start --workers N`: it forks N worker processes (each runs every role it is given,
// sharing the roles' ports through node:cluster), waits until all of them listen, restarts one that dies
// (after a pause that doubles while it keeps dying, up to a cap: a crash loop does not spin), and stops them
// all on a signal, waiting for each one's drain. Forking, timers and the clock are passed in: the real ones
// are node:cluster's (workers-start.ts), tests give fakes.
import type { Clock } from '../lib/clock.ts';
import type { Cancel, Timers } from '../lib/timers.ts';
import type { BannerRole } from './banner.ts';

/** What a worker tells the primary, over the IPC channel. */
export type WorkerReport =
  | { type: 'portolan:ready'; roles: readonly BannerRole[] }
  /** It cannot start: `line` says why, in one line (the primary prints it once, whichever workers failed). */
  | { type: 'portolan:failed'; line: string };

/** A forked worker as the supervisor sees it. */
export type WorkerHandle = {
  readonly pid: number | undefined;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  onReport(listener: (report: WorkerReport) => void): void;
  /** Sends a signal (SIGTERM: drain and stop; SIGKILL at the deadline). */
  kill(signal: NodeJS.Signals): void;
};

/** What the supervisor says of its workers (the primary's logger). */
export type SupervisorLog = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

export type SupervisorOptions = {
  /** How many workers, numbered 1..count. */
  count: number;
  /** Forks worker `number` (1..count); a restart forks the same number again. */
  fork(number: number): WorkerHandle;
  timers: Timers;
  clock: Clock;
  log: SupervisorLog;
  /** The first pause before a dead worker is forked again (default 500 ms); it doubles while the worker keeps dying. */
  firstRestartDelayMs?: number;
  /** The longest pause (default 30 s). */
  maxRestartDelayMs?: number;
  /** A worker that ran this long after it was ready has its pause start over at the first (default 60 s). */
  stableAfterMs?: number;
  /** How long `stop` waits for the workers' drain before it kills them (default 20 s). */
  stopTimeoutMs?: number;
};

/** How a start ended: every worker listens (with worker 1's roles), or one could not start. */
export type StartOutcome = { ok: true; roles: readonly BannerRole[] } | { ok: false; line: string };

export type Supervisor = {
  /** Settles once every worker is ready, or as soon as one fails before that (the others are then stopped). */
  started: Promise<StartOutcome>;
  /** Stops every worker (SIGTERM, their drain, SIGKILL after stopTimeoutMs); no restart after it. True when all drained. */
  stop(): Promise<boolean>;
  /** The pid of each worker now running, by number (tests, logs). */
  pids(): ReadonlyMap<number, number | undefined>;
};

type Slot = {
  number: number;
  handle: WorkerHandle | undefined;
  /** Deaths in a row (since its last stable run): the next pause is first * 2^(deaths - 1). */
  deaths: number;
  readyAtMs: number | undefined;
  restart: Cancel | undefined;
  exited: Promise<void>;
};

/**
 * Runs `count` workers. During the start, a worker that fails (reports `portolan:failed` or exits before it is
 * ready) ends the start: the others are stopped and `started` gives the first failure's line. Once started,
 * a worker that exits, whatever its code, is forked again after its pause, until `stop`.
 *
 * @example
 * const supervisor = superviseWorkers({ count: 4, fork, timers: systemTimers, clock: systemClock, log });
 * const outcome = await supervisor.started;
 * process.on('SIGTERM', () => void supervisor.stop());
 */
export function superviseWorkers(options: SupervisorOptions): Supervisor {
  const { count, timers, clock, log } = options;
  const firstDelay = options.firstRestartDelayMs ?? 500;
  const maxDelay = options.maxRestartDelayMs ?? 30_000;
  const stableAfter = options.stableAfterMs ?? 60_000;
  const stopTimeout = options.stopTimeoutMs ?? 20_000;
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let settle: (outcome: StartOutcome) => void = () => undefined;
  const started = new Promise<StartOutcome>((resolve) => (settle = resolve));
  let firstRoles: readonly BannerRole[] = [];
  let stopping: Promise<boolean> | undefined;

  const slots: Slot[] = Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    handle: undefined,
    deaths: 0,
    readyAtMs: undefined,
    restart: undefined,
    exited: Promise.resolve(),
  }));

  const failStart = (line: string) => {
    if (phase !== 'starting') return;
    settle({ ok: false, line });
    void stop();
  };

  const launch = (slot: Slot) => {
    slot.restart = undefined;
    slot.readyAtMs = undefined;
    const handle = options.fork(slot.number);
    slot.handle = handle;
    let exit: () => void = () => undefined;
    slot.exited = new Promise<void>((resolve) => (exit = resolve));
    handle.onReport((report) => {
      if (slot.handle !== handle) return;
      if (report.type === 'portolan:failed') {
        if (phase === 'starting') failStart(report.line);
        else log.error({ worker: slot.number, pid: handle.pid, reason: report.line }, 'worker could not start');
        return;
      }
      slot.readyAtMs = clock.nowMs();
      if (phase !== 'starting') return log.info({ worker: slot.number, pid: handle.pid }, 'worker restarted');
      if (slot.number === 1) firstRoles = report.roles;
      if (slots.every((s) => s.readyAtMs !== undefined)) {
        phase = 'running';
        settle({ ok: true, roles: firstRoles });
      }
    });
    handle.onExit((code, signal) => {
      exit();
      if (slot.handle !== handle) return;
      slot.handle = undefined;
      if (phase === 'stopping') return;
      if (phase === 'starting') {
        failStart(`Worker ${slot.number} stopped while starting (${signal ?? `exit code ${code}`}); see its log lines above.`);
        return;
      }
      // A worker that ran long enough was not crash-looping: its pauses start over.
      if (slot.readyAtMs !== undefined && clock.nowMs() - slot.readyAtMs >= stableAfter) slot.deaths = 0;
      slot.deaths++;
      const delay = Math.min(maxDelay, firstDelay * 2 ** Math.min(30, slot.deaths - 1));
      log.warn({ worker: slot.number, pid: handle.pid, code, signal, restartInMs: delay }, 'worker died; restarting it');
      slot.restart = timers.after(delay, () => launch(slot));
    });
  };

  const stop = (): Promise<boolean> => {
    stopping ??= (async () => {
      phase = 'stopping';
      for (const slot of slots) slot.restart?.();
      const running = slots.filter((s) => s.handle !== undefined);
      for (const slot of running) slot.handle!.kill('SIGTERM');
      let drained = true;
      const deadline = timers.after(stopTimeout, () => {
        drained = false;
        for (const slot of slots) {
          if (!slot.handle) continue;
          log.error({ worker: slot.number, pid: slot.handle.pid, limitMs: stopTimeout }, 'worker did not stop in time; killing it');
          slot.handle.kill('SIGKILL');
        }
      });
      await Promise.all(running.map((s) => s.exited));
      deadline();
      return drained;
    })();
    return stopping;
  };

  for (const slot of slots) launch(slot);
  return {
    started,
    stop,
    pids: () => new Map(slots.filter((s) => s.handle).map((s) => [s.number, s.handle!.pid])),
  };
}
