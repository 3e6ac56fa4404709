// bench:mapping's workers rows (the `bench:mapping-workers` block): the scenarios against
// `portolan start --workers 1` and `--workers 2` with PORTOLAN_ROLES=mapping, under the load of the
// configurations' rows (scripts/bench/workers.ts).
import { cpus } from 'node:os';
import { join } from 'node:path';
import { chooseScenarios, loadSpec, send, unexpectedOf } from './mapping-scenarios.ts';
import type { Children } from './processes.ts';
import { revision } from './run-facts.ts';
import {
  measureWorkers,
  startWorkers,
  WORKER_COUNTS,
  WORKERS_CPU,
  WORKERS_PROCESSES,
  type WorkersSystem,
  workersTable,
} from './workers.ts';

export type MappingWorkersOptions = {
  /** Where the systems' SQLite files go (a temporary directory). */
  dir: string;
  /** The scenarios' names (--scenarios). */
  wanted: readonly string[];
  connections: number;
  durationSeconds: number;
  rounds: number;
  warmupSeconds: number;
  profileDir?: string | undefined;
  log(line: string): void;
};

/** Starts both systems, checks each answers each scenario as expected, measures them and resolves with the block's text. */
export async function mappingWorkers(children: Children, options: MappingWorkersOptions): Promise<string> {
  const { dir, connections, durationSeconds, rounds, warmupSeconds } = options;
  const systems: WorkersSystem[] = [];
  for (const workers of WORKER_COUNTS) {
    const env = {
      PORTOLAN_MAPPING_PORT: '0',
      PORTOLAN_DATABASE: `sqlite:${join(dir, `workers-${workers}.db`)}`,
      PORTOLAN_VALIDATE_RESPONSES: 'false',
    };
    systems.push(await startWorkers(children, { workers, roles: 'mapping', role: 'mapping', env, profileDir: options.profileDir }));
  }
  const chosen = await chooseScenarios(systems[0]!.url, options.wanted);
  for (const scenario of chosen) {
    for (const system of systems) {
      const response = await send(system.url, scenario.request);
      await response.arrayBuffer();
      if (response.status !== scenario.status)
        throw new Error(`--workers ${system.workers} answered ${scenario.name} with ${response.status}, expected ${scenario.status}`);
    }
  }
  const cells = await measureWorkers({
    systems,
    cases: chosen,
    rounds,
    warmupSeconds,
    durationSeconds,
    spec: (system, scenario, seconds) => loadSpec(system.url, scenario, connections, seconds),
    unexpected: unexpectedOf,
    log: options.log,
  });
  const { table, goals } = workersTable(chosen, cells);
  return [
    `\`portolan start --workers N\` as real processes (${WORKERS_PROCESSES}) with PORTOLAN_ROLES=mapping, log level ` +
      `silent, response validation off, a fresh SQLite file each (POST valid: every worker commits into the same file). ` +
      `The load of the rows above: autocannon in its own process, \`-c ${connections} -d ${durationSeconds}\`, keep-alive; ` +
      `${rounds} interleaved round${rounds === 1 ? '' : 's'} (1, 2, 1, 2, ...) after a ${warmupSeconds} s warm-up of each, ` +
      `medians. ${WORKERS_CPU}. ${revision()}, node ${process.version}, ${cpus().length} cores, ` +
      `${new Date().toISOString().slice(0, 10)}.`,
    '',
    ...table,
    '',
    'Goals:',
    '',
    ...goals,
  ].join('\n');
}
