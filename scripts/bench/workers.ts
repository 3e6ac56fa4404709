// The workers rows of bench:gateway and bench:mapping: the same load against the system started as real
// processes with `portolan start --workers 1` (one process, as without the option) and with `--workers 2`
// (node:cluster: a primary that accepts each connection and hands it to a worker, and the workers), in
// interleaved rounds (1, 2, 1, 2, ...), medians. The CPU per request is that of every process of the system
// (the primary and its workers, found in /proc when each load starts), with the primary's share beside it. The figure asked of it: the ratio
// of workers 2 to workers 1 in req/s, above 1 (on a 2-core machine the load generator takes one core).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMicros, type LoadResult, type LoadSpec, measureLoad } from './load.ts';
import type { Children } from './processes.ts';
import { median } from './run-facts.ts';

/** The worker counts compared, in the order of each round. */
export const WORKER_COUNTS = [1, 2] as const;

/** The scripts' options for these rows: `--no-workers` leaves them out, `--only workers` runs them alone. */
export const WORKERS_OPTIONS = { workers: { type: 'boolean', default: true }, only: { type: 'string' } } as const;

/** Whether the script runs the workers rows alone; throws on a choice that leaves nothing or is unknown. */
export function onlyWorkers(values: { workers?: boolean; only?: string }): boolean {
  if (values.only !== undefined && values.only !== 'workers') throw new Error(`--only: the one choice is workers (got ${values.only})`);
  if (values.only === 'workers' && !values.workers) throw new Error('--only workers and --no-workers leave nothing to run');
  return values.only === 'workers';
}

/** The subdirectories of a --cpu-prof directory that the systems' profiles go to. */
export const WORKERS_PROFILE_DIRS = WORKER_COUNTS.map((workers) => `workers-${workers}`);

/** What the systems compared are, for the tables' text. */
export const WORKERS_PROCESSES = 'with 1, one process, as without the option; with 2, a primary and 2 workers';
export const WORKERS_CPU = "CPU µs per request: every process of the system (with 2 workers, the primary's share in brackets), from /proc";

/** A started system; `primary` is its one process with `--workers 1` (no primary is forked then). */
export type WorkersSystem = { workers: number; url: string; primary: number };

export type WorkersCase = { name: string; label: string };

/** One configuration under one case: each round's load, and the primary's CPU per request in that round. */
export type WorkersCell = { results: LoadResult[]; primaryUs: number[]; unexpected: number };

/** The processes the primary forked (its workers), from every one of its threads' /proc children list. */
export function workerPids(primary: number): number[] {
  return readdirSync(`/proc/${primary}/task`).flatMap((task) =>
    readFileSync(`/proc/${primary}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

/**
 * Starts `portolan start --workers <workers>` with `roles` and resolves once it prints `role`'s URL (the
 * primary prints it once every worker listens). With `profileDir`, the primary runs under `node --cpu-prof`
 * and its workers inherit the flag (node:cluster forks with the primary's node options): one profile per
 * process in `<profileDir>/workers-<workers>`.
 */
export async function startWorkers(
  children: Children,
  options: { workers: number; roles: string; role: string; env: Record<string, string>; profileDir?: string | undefined },
): Promise<WorkersSystem> {
  const { workers, roles, role, env, profileDir } = options;
  const url = await children.portolan(roles, env, role, {
    startArgs: ['--workers', String(workers)],
    ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, `workers-${workers}`)}`] } : {}),
  });
  const primary = children.pidOf(url);
  const forked = workerPids(primary).length;
  if (forked !== (workers > 1 ? workers : 0))
    throw new Error(`--workers ${workers}: the process started (pid ${primary}) has ${forked} child processes`);
  return { workers, url, primary };
}

/**
 * Loads each system with each case: a warm-up of each, then `rounds` rounds, each case on workers 1 then
 * workers 2 back to back, so a slow moment of the machine hits both alike. Cells by `<workers> <case name>`.
 */
export async function measureWorkers<C extends WorkersCase>(options: {
  systems: readonly WorkersSystem[];
  cases: readonly C[];
  rounds: number;
  warmupSeconds: number;
  durationSeconds: number;
  spec(system: WorkersSystem, kase: C, durationSeconds: number): LoadSpec;
  /** Requests that were not answered as the case expects (default: errors and answers outside 2xx). */
  unexpected?(result: LoadResult, kase: C): number;
  log(line: string): void;
}): Promise<Map<string, WorkersCell>> {
  const { systems, cases, rounds, spec, log } = options;
  const unexpected = options.unexpected ?? ((r: LoadResult) => r.errors + r.non2xx);
  if (options.warmupSeconds > 0)
    for (const kase of cases) for (const system of systems) await measureLoad(spec(system, kase, options.warmupSeconds));
  const cells = new Map<string, WorkersCell>();
  for (let round = 0; round < rounds; round++) {
    for (const kase of cases) {
      for (const system of systems) {
        const pids = [system.primary, ...workerPids(system.primary)];
        const before = cpuMicros(system.primary);
        const result = await measureLoad(spec(system, kase, options.durationSeconds), pids);
        const primaryUs = result.requests && system.workers > 1 ? (cpuMicros(system.primary) - before) / result.requests : Number.NaN;
        const key = `${system.workers} ${kase.name}`;
        const cell = cells.get(key) ?? cells.set(key, { results: [], primaryUs: [], unexpected: 0 }).get(key)!;
        cell.results.push(result);
        cell.primaryUs.push(primaryUs);
        cell.unexpected += unexpected(result, kase);
        log(
          `round ${round + 1}/${rounds} ${kase.name} workers ${system.workers}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms, ` +
            `${result.cpuUsPerRequest?.toFixed(0)} µs CPU/request${system.workers > 1 ? ` (primary ${primaryUs.toFixed(1)})` : ''}, non-2xx ${result.non2xx}, errors ${result.errors}`,
        );
      }
    }
  }
  return cells;
}

/**
 * The markdown rows: one per worker count (req/s · CPU µs/request of every process, the primary's share ·
 * p99), one with the ratio workers 2 / workers 1 per case (of the medians, each round's ratio beside it),
 * and one goal line per case.
 */
export function workersTable(cases: readonly WorkersCase[], cells: ReadonlyMap<string, WorkersCell>): { table: string[]; goals: string[] } {
  const cell = (workers: number, kase: WorkersCase) => cells.get(`${workers} ${kase.name}`)!;
  const rps = (workers: number, kase: WorkersCase) => median(cell(workers, kase).results.map((r) => r.rps));
  const [one, two] = WORKER_COUNTS;
  const table = [`| \`--workers\` | ${cases.map((c) => c.label).join(' | ')} |`, `|---|${cases.map(() => '---:|').join('')}`];
  for (const workers of WORKER_COUNTS) {
    const row = cases.map((kase) => {
      const { results, primaryUs, unexpected } = cell(workers, kase);
      const cpu = median(results.map((r) => r.cpuUsPerRequest ?? Number.NaN));
      const p99 = median(results.map((r) => r.p99Ms));
      const bad = unexpected ? ` · **${unexpected} unexpected**` : '';
      const primary = workers > 1 ? ` (primary ${median(primaryUs).toFixed(1)})` : '';
      return `${rps(workers, kase).toFixed(0)} req/s · ${cpu.toFixed(0)} µs${primary} · p99 ${p99.toFixed(1)} ms${bad}`;
    });
    table.push(`| ${workers} | ${row.join(' | ')} |`);
  }
  const ratios = cases.map((kase) => {
    const [a, b] = [cell(one, kase).results, cell(two, kase).results];
    const perRound = b.map((r, i) => (r.rps / a[i]!.rps).toFixed(2)).join(', ');
    return { kase, ratio: rps(two, kase) / rps(one, kase), perRound };
  });
  table.push(`| ${two} / ${one} | ${ratios.map(({ ratio, perRound }) => `**${ratio.toFixed(2)}x** (rounds ${perRound})`).join(' | ')} |`);
  const goals = ratios.map(
    ({ kase, ratio }) =>
      `- ${kase.label}, \`--workers ${two}\` against \`--workers ${one}\`: ${ratio.toFixed(2)}x req/s (goal above 1): ${ratio > 1 ? 'met' : '**not met**'}`,
  );
  return { table, goals };
}
