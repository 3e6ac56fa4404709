// Benchmark (not a test) of the mapping role alone, each configuration in a process of its
// own and loaded in one run by autocannon in its own process (scripts/bench/load.ts): a raw node:http server
// replaying the mapping role's own answers byte for byte (scripts/bench/baseline-replay.ts, the 1.00x), fastify 5
// with the same routes and the spec's request schemas (scripts/bench/fastify-mapping.ts, POST into memory), and
// the Portolan mapping role (a fresh SQLite file, request validation on as always, response validation off) at
// log level silent and at the default level, info (its access lines go to stdout, which is read and dropped).
// Scenarios: GET the vessel list, GET one vessel, POST a valid chart (the spec's `full` example: 201, each one a
// committed row for Portolan), POST an invalid one (an unknown property: 400). Interleaved rounds, medians; CPU
// per request of the process under test from /proc.
//
// Then the workers rows (scripts/bench/workers.ts): the same scenarios and load against `portolan start
// --workers 1` and `--workers 2` with PORTOLAN_ROLES=mapping (log level silent, a fresh SQLite file each), and
// the ratio workers 2 / workers 1.
//
//   npm run bench:mapping [-- --duration 5 --connections 50 --rounds 3 --warmup 1
//                            --scenarios get-list,get-one,post-valid,post-invalid --no-workers --only workers
//                            --cpu-prof <dir> --no-readme --help]
//
// Writes its tables into docs/benchmarks.md (`<!-- bench:mapping -->`, `<!-- bench:mapping-workers -->`) unless
// --no-readme, --cpu-prof or a subset of the scenarios; --only workers runs (and writes) the workers rows alone.
// --cpu-prof <dir> starts both Portolan processes with `node --cpu-prof --cpu-prof-dir=<dir>` (one profile
// each, written when they stop; a --workers system: one per process under <dir>/workers-<N>); read one with
// `node scripts/bench/top-frames.ts <file> --skip-ms 2000`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { RecordedAnswer } from './baseline-replay.ts';
import { type LoadResult, measureLoad } from './load.ts';
import { chooseScenarios, loadSpec, SCENARIO_NAMES, type Scenario, send, unexpectedOf } from './mapping-scenarios.ts';
import { mappingWorkers } from './mapping-workers.ts';
import { childProcesses, type StartOptions } from './processes.ts';
import { writeReadmeBlock } from './readme-block.ts';
import { helpWhenAsked, median, profilesWritten, revision } from './run-facts.ts';
import { onlyWorkers, WORKERS_OPTIONS, WORKERS_PROFILE_DIRS } from './workers.ts';

const { values } = parseArgs({
  allowNegative: true,
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    scenarios: { type: 'string', default: SCENARIO_NAMES.join(',') },
    ...WORKERS_OPTIONS,
    help: { type: 'boolean', short: 'h', default: false },
    'cpu-prof': { type: 'string' },
    readme: { type: 'boolean', default: true },
  },
});
helpWhenAsked(values.help, import.meta.url);
const ONLY_WORKERS = onlyWorkers(values);
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const PROFILE_DIR = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
for (const [name, value] of Object.entries({ duration: DURATION, connections: CONNECTIONS, rounds: ROUNDS }))
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`);
if (!(WARMUP >= 0)) throw new Error('--warmup must be a number of seconds, 0 or more');

/** Headers the baseline must not replay: they describe one connection or one moment. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Sends the scenario's request once to the mapping role and records its answer, so the baseline can send the same bytes. */
async function record(base: string, scenario: Scenario): Promise<RecordedAnswer> {
  const response = await send(base, scenario.request);
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== scenario.status) {
    throw new Error(
      `${scenario.name}: the mapping role answered ${response.status}, expected ${scenario.status}: ${bytes.toString().slice(0, 300)}`,
    );
  }
  const { method, path, body } = scenario.request;
  return {
    method,
    path,
    body: body ?? '',
    status: response.status,
    headers: Object.fromEntries([...response.headers].filter(([name]) => !PER_CONNECTION.has(name))),
    answer: bytes.toString('base64'),
  };
}

/** Every server answers every scenario with its status, and a GET with the same value (fastify's data is the seed's). */
async function checkAnswers(rows: readonly Target[], chosen: readonly Scenario[]): Promise<void> {
  for (const scenario of chosen) {
    let reference: unknown;
    for (const row of rows) {
      const response = await send(row.url, scenario.request);
      const text = await response.text();
      if (response.status !== scenario.status)
        throw new Error(`${row.key} answered ${scenario.name} with ${response.status}, expected ${scenario.status}: ${text.slice(0, 300)}`);
      if (scenario.request.method !== 'GET') continue;
      const value: unknown = JSON.parse(text);
      reference ??= value;
      if (!isDeepStrictEqual(value, reference))
        throw new Error(`${row.key} answers ${scenario.name} with another value than ${rows[0]!.key}`);
    }
  }
}

type Target = { key: 'raw' | 'fastify' | 'silent' | 'info'; label: string; url: string; pid: number };
type Cell = { results: LoadResult[]; unexpected: number };

const log = (line: string) => process.stderr.write(`${line}\n`);

const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-mapping-'));
const children = childProcesses();
let exitCode = 0;
const wanted = values.scenarios.split(',').map((s) => s.trim());
const full = wanted.length === SCENARIO_NAMES.length && SCENARIO_NAMES.every((name) => wanted.includes(name));

/** The configurations' rows: the `bench:mapping` block. */
async function configurationRows(): Promise<void> {
  const profiled = (name: string): StartOptions =>
    PROFILE_DIR
      ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=mapping-${name}-${process.pid}.cpuprofile`] }
      : {};
  const portolan = async (key: 'silent' | 'info', env: Record<string, string>) => {
    const url = await children.portolan(
      'mapping',
      {
        PORTOLAN_MAPPING_PORT: '0',
        PORTOLAN_DATABASE: `sqlite:${join(dir, `mapping-${key}.db`)}`,
        PORTOLAN_VALIDATE_RESPONSES: 'false',
        ...env,
      },
      'mapping',
      profiled(key),
    );
    return { url, pid: children.pidOf(url) };
  };
  const silent = await portolan('silent', {});
  const info = await portolan('info', { PORTOLAN_LOG_LEVEL: 'info' });

  const chosen = await chooseScenarios(silent.url, wanted);
  const answers: RecordedAnswer[] = [];
  for (const scenario of chosen) answers.push(await record(silent.url, scenario));
  writeFileSync(join(dir, 'answers.json'), JSON.stringify(answers));
  const raw = await children.start(['scripts/bench/baseline-replay.ts'], { ANSWERS: join(dir, 'answers.json') }, /^READY (\S+)/);
  const fastify = await children.start(['scripts/bench/fastify-mapping.ts'], {}, /^READY (\S+)/);

  const targets: Target[] = [
    { key: 'raw', label: 'raw node:http replaying the same bytes (baseline)', url: raw, pid: children.pidOf(raw) },
    {
      key: 'fastify',
      label: 'fastify 5, same routes and request schemas, POST into memory, no logger',
      url: fastify,
      pid: children.pidOf(fastify),
    },
    { key: 'silent', label: 'Portolan mapping role, log level silent', url: silent.url, pid: silent.pid },
    { key: 'info', label: 'Portolan mapping role, log level info (the default)', url: info.url, pid: info.pid },
  ];
  await checkAnswers(targets, chosen);

  const load = (target: Target, scenario: Scenario, durationSeconds: number) =>
    measureLoad(loadSpec(target.url, scenario, CONNECTIONS, durationSeconds), [target.pid]);
  // Warm-up: every process JIT-compiles each path (and the load generator its own) before a figure is kept.
  if (WARMUP > 0) for (const scenario of chosen) for (const target of targets) await load(target, scenario, WARMUP);
  const cells = new Map<string, Cell>();
  const cellOf = (target: Target, scenario: Scenario) => {
    const key = `${target.key} ${scenario.name}`;
    return cells.get(key) ?? cells.set(key, { results: [], unexpected: 0 }).get(key)!;
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved: each scenario on every server back to back, so a slow moment of the machine hits all alike.
    for (const scenario of chosen) {
      for (const target of targets) {
        const result = await load(target, scenario, DURATION);
        const cell = cellOf(target, scenario);
        cell.results.push(result);
        cell.unexpected += unexpectedOf(result, scenario);
        log(
          `round ${round + 1}/${ROUNDS} ${scenario.name} ${target.key}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms, ` +
            `${result.cpuUsPerRequest?.toFixed(0)} µs CPU/request, non-2xx ${result.non2xx}, errors ${result.errors}`,
        );
      }
    }
  }

  const rps = (key: Target['key'], scenario: Scenario) => median(cells.get(`${key} ${scenario.name}`)!.results.map((r) => r.rps));
  const lines = [
    `Each configuration in its own process; autocannon in its own process, \`-c ${CONNECTIONS} -d ${DURATION}\`, keep-alive; ` +
      `${ROUNDS} interleaved round${ROUNDS === 1 ? '' : 's'} after a ${WARMUP} s warm-up of each, medians. Cells: req/s, x the raw baseline ` +
      `in the same run, CPU µs per request of the process under test (from /proc). ${revision()}, node ${process.version}, ` +
      `${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    `| configuration | ${chosen.map((s) => s.label).join(' | ')} |`,
    `|---|${chosen.map(() => '---:|').join('')}`,
  ];
  for (const target of targets) {
    const row = chosen.map((scenario) => {
      const cell = cells.get(`${target.key} ${scenario.name}`)!;
      const r = rps(target.key, scenario);
      const cpu = median(cell.results.map((x) => x.cpuUsPerRequest ?? Number.NaN));
      const bad = cell.unexpected ? `, **${cell.unexpected} unexpected**` : '';
      return `${r.toFixed(0)} · ${(r / rps('raw', scenario)).toFixed(2)}x · ${cpu.toFixed(0)} µs${bad}`;
    });
    lines.push(`| ${target.label} | ${row.join(' | ')} |`);
  }
  lines.push('', `| p99 latency, ms | ${chosen.map((s) => s.label).join(' | ')} |`, `|---|${chosen.map(() => '---:|').join('')}`);
  for (const target of targets) {
    const row = chosen.map((scenario) => median(cells.get(`${target.key} ${scenario.name}`)!.results.map((x) => x.p99Ms)).toFixed(1));
    lines.push(`| ${target.label} | ${row.join(' | ')} |`);
  }

  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  // Beside each req/s ratio, the same ratio by CPU per request (the other's µs over Portolan's): what one core
  // would serve, steadier than req/s when other work on the machine takes turns with the processes measured.
  const cpu = (key: Target['key'], scenario: Scenario) =>
    median(cells.get(`${key} ${scenario.name}`)!.results.map((r) => r.cpuUsPerRequest ?? Number.NaN));
  const goals: string[] = [];
  for (const scenario of chosen) {
    const against = scenario.name === 'post-valid' ? 'raw' : 'fastify';
    const goal = scenario.name === 'post-valid' ? 0.5 : 1;
    const [atInfo, atSilent] = [rps('info', scenario) / rps(against, scenario), rps('silent', scenario) / rps(against, scenario)];
    const [cpuInfo, cpuSilent] = [cpu(against, scenario) / cpu('info', scenario), cpu(against, scenario) / cpu('silent', scenario)];
    const durable = scenario.name === 'post-valid' ? ', each 201 sent after its row is committed' : '';
    goals.push(
      `- ${scenario.label}, Portolan at info: ${atInfo.toFixed(2)}x ${against} (goal ≥ ${goal.toFixed(1)}x${durable}): ${verdict(atInfo >= goal)}; ` +
        `at silent ${atSilent.toFixed(2)}x. By CPU per request: ${cpuInfo.toFixed(2)}x at info, ${cpuSilent.toFixed(2)}x at silent`,
    );
  }
  const logging = chosen.map((s) => `${s.label} ${((1 - rps('info', s) / rps('silent', s)) * 100).toFixed(1)} %`).join(', ');
  goals.push(`- logging cost, Portolan info against silent (req/s lost): ${logging}`);
  const table = [...lines, '', 'Goals:', '', ...goals].join('\n');
  console.log(table);
  writeBlock('bench:mapping', table);
}

function writeBlock(name: string, text: string): void {
  if (values.readme && full && !PROFILE_DIR) {
    writeReadmeBlock(name, text);
    console.log(`\nWritten into docs/benchmarks.md (${name} block).`);
  } else if (values.readme) {
    console.log(`\ndocs/benchmarks.md left as it is (${PROFILE_DIR ? 'a profiled run' : 'not every scenario'}).`);
  }
}

/** The workers rows: the `bench:mapping-workers` block. */
async function workerRows(): Promise<void> {
  const text = await mappingWorkers(children, {
    dir,
    wanted,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    rounds: ROUNDS,
    warmupSeconds: WARMUP,
    profileDir: PROFILE_DIR,
    log,
  });
  console.log(`\n${text}`);
  writeBlock('bench:mapping-workers', text);
}

try {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  if (!ONLY_WORKERS) await configurationRows();
  if (values.workers) await workerRows();
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await children.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (PROFILE_DIR) {
  for (const file of profilesWritten(PROFILE_DIR, process.pid, WORKERS_PROFILE_DIRS))
    console.log(`profile: ${file}  (node scripts/bench/top-frames.ts ${file} --skip-ms 2000)`);
}
process.exitCode = exitCode;
