/** One token key's counter as a store holds it: the window ends at `expiresAtMs` (gone from then on). */
export type CounterEntry = { count: number; expiresAtMs: number };

/** The rule a hit is counted under (settings, passed on every call so stores hold no configuration). */
export type CounterRule = { limit: number; windowMs: number };

/**
 * The outcome of one hit. `counted` false means the key was already at the limit: nothing changed.
 * `count` never exceeds the limit; `expiresAtMs` is the end of the key's current window.
 */
export type HitResult = { counted: boolean } & CounterEntry;

export type PingResult = { ok: true } | { ok: false; reason: string };

/**
 * A place that keeps rate-limit counters: in memory, in a SQLite file, in Redis. Every `hit` is
 * atomic (a new or expired entry starts a window of `windowMs` at `nowMs` with count 1; a live entry
 * below the limit counts one more; a live entry at the limit is left alone), so concurrent hits on one
 * key never count past the limit, however many processes share the store. Time is always the
 * caller's `nowMs` (an injected clock): an entry is live while `nowMs < expiresAtMs`.
 * Failures (store down, timeouts) reject; the limiter's outage policy decides what they mean.
 */
export interface CounterStore {
  /** Which kind of store this is, for logs (never a URL: it may hold a password). */
  readonly name: string;
  hit(key: string, nowMs: number, rule: CounterRule): Promise<HitResult>;
  /** The live entry of `key` at `nowMs`, or undefined; changes nothing. */
  peek(key: string, nowMs: number): Promise<CounterEntry | undefined>;
  /** Whether the store answers, within `timeoutMs`; never rejects. */
  ping(timeoutMs: number): Promise<PingResult>;
  close(): Promise<void>;
}
