import type { CounterEntry, CounterRule, CounterStore, HitResult } from './counter-store.ts';

export type MemoryStoreOptions = {
  /**
   * Most keys held at once (default 1,000,000, roughly 150 MB). Past it the oldest window is dropped
   * early, so that token starts afresh: memory stays bounded even against a flood of random tokens.
   */
  maxEntries?: number;
};

/**
 * Counters in this process's memory: exact within one process (every hit is synchronous), nothing
 * shared between processes. No timers: expired entries are swept on the way, in order. A window
 * starts when its entry is (re)inserted and every window has the same length, so the Map's insertion
 * order is expiry order and the sweep stops at the first live entry (amortised O(1) per new key).
 *
 * @example
 * const store = createMemoryStore();
 * await store.hit(counterKey('abc'), clock.nowMs(), { limit: 1000, windowMs: 300_000 });
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): CounterStore & { readonly size: number } {
  const maxEntries = options.maxEntries ?? 1_000_000;
  const entries = new Map<string, CounterEntry>();

  const sweep = (nowMs: number): void => {
    for (const [key, entry] of entries) {
      if (entry.expiresAtMs > nowMs) break;
      entries.delete(key);
    }
  };

  const live = (key: string, nowMs: number): CounterEntry | undefined => {
    const entry = entries.get(key);
    return entry !== undefined && nowMs < entry.expiresAtMs ? entry : undefined;
  };

  const hitNow = (key: string, nowMs: number, rule: CounterRule): HitResult => {
    const entry = live(key, nowMs);
    if (entry === undefined) {
      entries.delete(key); // re-inserted at the end: insertion order stays expiry order
      sweep(nowMs);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      const started = { count: 1, expiresAtMs: nowMs + rule.windowMs };
      entries.set(key, started);
      return { counted: true, ...started };
    }
    if (entry.count >= rule.limit) return { counted: false, count: rule.limit, expiresAtMs: entry.expiresAtMs };
    entry.count += 1;
    return { counted: true, count: entry.count, expiresAtMs: entry.expiresAtMs };
  };

  return {
    name: 'memory',
    get size() {
      return entries.size;
    },
    hit: async (key, nowMs, rule) => hitNow(key, nowMs, rule),
    peek: async (key, nowMs) => {
      const entry = live(key, nowMs);
      return entry && { ...entry };
    },
    ping: async () => ({ ok: true }),
    close: async () => entries.clear(),
  };
}
