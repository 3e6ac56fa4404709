// bench:gateway's workers rows (the `bench:gateway-workers` block): GET through the gateway of
// `portolan start --workers 1` and `--workers 2` with PORTOLAN_ROLES=gateway,mapping, the gateway's pool being
// the mapping role of the same system, under the load of the proxies' rows (scripts/bench/workers.ts).
import { cpus } from 'node:os';
import { join } from 'node:path';
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

export type GatewayWorkersOptions = {
  /** Where the systems' SQLite files go (a temporary directory). */
  dir: string;
  path: string;
  connections: number;
  durationSeconds: number;
  rounds: number;
  warmupSeconds: number;
  /** Each request with one of this many bearer tokens in turn. */
  tokens: number;
  profileDir?: string | undefined;
  log(line: string): void;
};

/** Starts both systems, measures them and resolves with the block's text (its intro, table and goal). */
export async function gatewayWorkers(children: Children, options: GatewayWorkersOptions): Promise<string> {
  const { dir, path, connections, durationSeconds, rounds, warmupSeconds, tokens } = options;
  const systems: WorkersSystem[] = [];
  for (const workers of WORKER_COUNTS) {
    const env = {
      PORTOLAN_GATEWAY_PORT: '0',
      PORTOLAN_MAPPING_PORT: '0',
      PORTOLAN_DATABASE: `sqlite:${join(dir, `workers-${workers}.db`)}`,
      // Left empty, the pool is the mapping role of this system (with 2 workers, on the port they share).
      PORTOLAN_POOL_MEMBERS: '',
      PORTOLAN_RATE_LIMIT_ENABLED: 'true',
      // The store --workers 2 takes when none is set, for both: the two rows differ by the worker count alone.
      PORTOLAN_RATE_LIMIT_STORE: `sqlite:${join(dir, `workers-${workers}-rate-limit.db`)}`,
      // Never limited: every request is counted, none refused; the store counts as down only after 1 s of silence.
      PORTOLAN_RATE_LIMIT_LIMIT: '1000000000',
      PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS: '1000',
    };
    systems.push(await startWorkers(children, { workers, roles: 'gateway,mapping', role: 'gateway', env, profileDir: options.profileDir }));
  }
  const kase = { name: 'get', label: `GET ${path} through the gateway` };
  const cells = await measureWorkers({
    systems,
    cases: [kase],
    rounds,
    warmupSeconds,
    durationSeconds,
    spec: (system, _kase, seconds) => ({ url: system.url, path, connections, durationSeconds: seconds, rotateBearer: tokens }),
    log: options.log,
  });
  const { table, goals } = workersTable([kase], cells);
  return [
    `\`portolan start --workers N\` as real processes (${WORKERS_PROCESSES}) with PORTOLAN_ROLES=gateway,mapping: the ` +
      `gateway's pool is the mapping role of the same system; limiter on with SQLite counters (a file per system; the ` +
      `store \`--workers 2\` takes by default), never limiting; log level silent; a fresh SQLite database. The load of ` +
      `the rows above: autocannon in its own process, \`-c ${connections} -d ${durationSeconds}\`, keep-alive, ${tokens} ` +
      `rotating bearer tokens; ${rounds} interleaved round${rounds === 1 ? '' : 's'} (1, 2, 1, 2, ...) after a ` +
      `${warmupSeconds} s warm-up each, medians. ${WORKERS_CPU} (gateway and mapping both). ${revision()}, ` +
      `node ${process.version}, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    ...table,
    '',
    'Goal:',
    '',
    ...goals,
  ].join('\n');
}
