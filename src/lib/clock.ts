/** The source of time, passed in so tests can move it; domain code never calls Date.now(). */
export type Clock = { now(): Date; nowMs(): number };

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** A clock that only moves when told to, for tests. */
export function createFakeClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let current = start;
  return {
    now: () => new Date(current),
    nowMs: () => current,
    advance(ms: number) {
      current += ms;
    },
  } satisfies Clock & { advance(ms: number): void };
}
