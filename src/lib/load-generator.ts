import { Pool } from 'undici';

export type LoadOptions = {
  /** Base URLs; request i goes to targets[i % targets.length]. */
  targets: readonly string[];
  requests: number;
  concurrency: number;
  /** Path, headers and body of request i. */
  request(i: number): { path: string; method?: string; headers?: Record<string, string>; body?: string };
  /** Called with each answer (tests tally per token). */
  onResult?(i: number, status: number): void;
};

export type LoadResult = {
  /** How many answers of each status (0: the request failed without an answer). */
  byStatus: Map<number, number>;
  /** Per-request latency in ms, in completion order. */
  latenciesMs: Float64Array;
  seconds: number;
};

/**
 * A closed-loop load generator over keep-alive connections: `concurrency` requests in flight at
 * all times until `requests` have been answered. Used by the gateway's exactness tests and by the
 * benchmarks (scripts/bench/), so both measure the same way; it lives in src/ because nothing in
 * src/ imports scripts/.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const perTarget = Math.max(1, Math.ceil(options.concurrency / options.targets.length));
  const pools = options.targets.map((url) => new Pool(url, { connections: perTarget, pipelining: 1 }));
  const byStatus = new Map<number, number>();
  const latenciesMs = new Float64Array(options.requests);
  let next = 0;
  let done = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < options.requests) {
      const i = next++;
      const { path, method = 'GET', headers, body } = options.request(i);
      const t0 = process.hrtime.bigint();
      let status = 0;
      try {
        const response = await pools[i % pools.length]!.request({
          path,
          method,
          ...(headers ? { headers } : {}),
          ...(body !== undefined ? { body } : {}),
        });
        status = response.statusCode;
        await response.body.dump();
      } catch {
        status = 0;
      }
      latenciesMs[done++] = Number(process.hrtime.bigint() - t0) / 1e6;
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      options.onResult?.(i, status);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, options.requests) }, worker));
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return { byStatus, latenciesMs, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** The p-th percentile (0-100) of latencies, in ms. */
export function percentile(latenciesMs: Float64Array, p: number): number {
  const sorted = Float64Array.from(latenciesMs).sort();
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The median of some figures (the upper one of the middle two for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}
