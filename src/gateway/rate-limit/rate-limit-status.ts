import type { RateLimitStatus } from '../../../generated/rate-limit/types.gen.ts';
import type { CounterEntry, CounterRule } from './counter-store.ts';

/**
 * Whole seconds until `expiresAtMs`, rounded up: a live entry never reports 0 (a client told
 * "0 seconds" would retry at once and be refused again), and at exactly the expiry the entry is gone.
 * Capped at the window, in case the clock stepped back.
 */
export const secondsLeft = (expiresAtMs: number, nowMs: number, windowMs: number): number =>
  Math.ceil(Math.min(expiresAtMs - nowMs, windowMs) / 1000);

/** The status body of a key: limit, limit minus count, seconds left; (limit, limit, window) with no entry. */
export function statusOf(entry: CounterEntry | undefined, nowMs: number, rule: CounterRule): RateLimitStatus {
  if (entry === undefined || entry.count <= 0 || entry.expiresAtMs <= nowMs) {
    return {
      'x-rate-limit-limit': rule.limit,
      'x-rate-limit-remaining': rule.limit,
      'x-rate-limit-reset': Math.ceil(rule.windowMs / 1000),
    };
  }
  return {
    'x-rate-limit-limit': rule.limit,
    'x-rate-limit-remaining': Math.max(0, rule.limit - entry.count),
    'x-rate-limit-reset': secondsLeft(entry.expiresAtMs, nowMs, rule.windowMs),
  };
}
