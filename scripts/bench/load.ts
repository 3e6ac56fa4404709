// One measurement of the benchmarks: autocannon in its own process (scripts/bench/autocannon-worker.ts)
// drives `url` for a while, and the CPU time the process under test spent meanwhile (from /proc) is
// divided by the requests it answered: the CPU per request that a req/s figure alone would hide.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./autocannon-worker.ts', import.meta.url));

export type LoadSpec = {
  url: string;
  path: string;
  connections: number;
  durationSeconds: number;
  /** Stop after this many requests instead (a warm-up). */
  amount?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Send `Authorization: Bearer bench-token-<i>`, i turning over this many tokens. */
  rotateBearer?: number;
};

export type LoadResult = {
  rps: number;
  p99Ms: number;
  requests: number;
  /** Answers outside 2xx (autocannon's count) and transport errors or timeouts. */
  non2xx: number;
  errors: number;
  /** Microseconds of CPU (user + system) of `pids` per request; undefined when no pid was given. */
  cpuUsPerRequest?: number;
};

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User + system CPU of a process so far, in microseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

/**
 * Runs one load and measures the processes `pids` (the process under test; for an anchor such as HAProxy,
 * its worker) meanwhile.
 *
 * @example
 * const { rps, cpuUsPerRequest } = await measureLoad({ url, path: '/api/vessels', connections: 50, durationSeconds: 5 }, [pid]);
 */
export async function measureLoad(spec: LoadSpec, pids: readonly number[] = []): Promise<LoadResult> {
  const before = pids.map(cpuMicros);
  const { stdout } = await run(process.execPath, [worker, JSON.stringify(spec)], { maxBuffer: 1 << 20 });
  const after = pids.map(cpuMicros);
  const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    requests: number;
    seconds: number;
    p99: number;
    non2xx: number;
    errors: number;
  };
  const cpu = after.reduce((sum, t, i) => sum + t - before[i]!, 0);
  return {
    rps: out.requests / out.seconds,
    p99Ms: out.p99,
    requests: out.requests,
    non2xx: out.non2xx,
    errors: out.errors,
    ...(pids.length ? { cpuUsPerRequest: out.requests ? cpu / out.requests : Number.NaN } : {}),
  };
}
