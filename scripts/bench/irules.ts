// Benchmark (not a test) of a deployed service's rules: one device-role process (its own process) deploys one
// declaration with two services over the same pool (one member: a trivial node:http server in a process of its
// own), one without rules, one with a three-branch rule and one with a rule that does nothing (what attaching
// any rule costs), and autocannon (in its own process,
// scripts/bench/load.ts) drives each in interleaved rounds; medians; CPU per request of the device process
// from /proc. The rule's three branches: a path prefix picks a pool, another inserts a field, the last (the
// one the load takes, after both comparisons fail) inserts X-Forwarded-Proto. Goal: the rule costs under 20 %
// of the service's requests per second.
//
//   npm run bench:irules [-- --duration 5 --connections 50 --rounds 3 --warmup 1 --cpu-prof <dir> --no-readme --help]
//
// Writes its table into docs/benchmarks.md (`<!-- bench:irules -->`) unless --no-readme or --cpu-prof.
// --cpu-prof <dir> starts the device process with `node --cpu-prof`; read the profile with
// `node scripts/bench/top-frames.ts <file> --skip-ms 2000`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findFreePorts } from '../../src/lib/free-ports.ts';
import { measureLoad, type LoadResult } from './load.ts';
import { childProcesses, type StartOptions } from './processes.ts';
import { writeReadmeBlock } from './readme-block.ts';
import { helpWhenAsked, median, profilesWritten, revision } from './run-facts.ts';

const { values } = parseArgs({
  allowNegative: true,
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    help: { type: 'boolean', short: 'h', default: false },
    'cpu-prof': { type: 'string' },
    readme: { type: 'boolean', default: true },
  },
});
helpWhenAsked(values.help, import.meta.url);
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const PROFILE_DIR = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
for (const [name, value] of Object.entries({ duration: DURATION, connections: CONNECTIONS, rounds: ROUNDS }))
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`);

/** The rule measured: three branches, the last taken by the load (`GET /`). */
const THREE_BRANCH_RULE = `when HTTP_REQUEST {
  if { [HTTP::path] starts_with "/api" } {
    pool bench_pool
  } elseif { [HTTP::path] starts_with "/static" } {
    HTTP::header insert X-Static 1
  } else {
    HTTP::header insert X-Forwarded-Proto https
  }
}`;

const MEMBER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => res.end(req.headers['x-forwarded-proto'] === 'https' ? 'ok rule' : 'ok'));
server.listen(0, '127.0.0.1', () => console.log('READY ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

const log = (line: string) => process.stderr.write(`${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-irules-'));
const children = childProcesses();
let exitCode = 0;

/** Deploys the two services through the device's REST (the administrative account of processes.ts). */
async function deploy(device: string, memberPort: number, [plain, ruled, empty]: readonly number[]): Promise<void> {
  const service = (port: number, rules: string[]) => ({
    class: 'Service_HTTP',
    virtualAddresses: ['127.0.0.1'],
    virtualPort: port,
    pool: 'bench_pool',
    ...(rules.length ? { iRules: rules } : {}),
  });
  const declaration = {
    class: 'ADC',
    schemaVersion: '3.0.0',
    id: 'bench-irules',
    Bench: {
      class: 'Tenant',
      A1: {
        class: 'Application',
        template: 'generic',
        plain_vs: service(plain!, []),
        rules_vs: service(ruled!, ['three_branches']),
        empty_vs: service(empty!, ['nothing']),
        bench_pool: { class: 'Pool', members: [{ servicePort: memberPort, serverAddresses: ['127.0.0.1'] }] },
        three_branches: { class: 'iRule', iRule: THREE_BRANCH_RULE },
        nothing: { class: 'iRule', iRule: 'when HTTP_REQUEST {\n}' },
      },
    },
  };
  const res = await fetch(`${device}/mgmt/shared/appsvcs/declare`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('admin:bench-admin').toString('base64')}` },
    body: JSON.stringify(declaration),
  });
  if (res.status !== 200) throw new Error(`the declaration was not deployed: ${res.status} ${(await res.text()).slice(0, 500)}`);
  // The rule runs: the member tells whether the field the rule inserts reached it.
  const answers = await Promise.all([plain, ruled, empty].map((port) => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())));
  if (answers.join() !== 'ok,ok rule,ok') throw new Error(`the services do not answer as expected: ${JSON.stringify(answers)}`);
}

type Row = { key: 'plain' | 'rules' | 'empty'; label: string; url: string; results: LoadResult[] };

async function run(): Promise<void> {
  const memberPort = Number(await children.start(['--input-type=module', '-e', MEMBER], {}, /^READY (\d+)/));
  const profiled: StartOptions = PROFILE_DIR
    ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=device-${process.pid}.cpuprofile`] }
    : {};
  const device = await children.portolan(
    'device',
    {
      PORTOLAN_DEVICE_PORT: '0',
      PORTOLAN_DEVICE_PORT_OFFSET: '0',
      PORTOLAN_DATABASE: `sqlite:${join(dir, 'device.db')}`,
      PORTOLAN_DEVICE_DATA_DIR: join(dir, 'device'),
    },
    'device',
    profiled,
  );
  const pid = children.pidOf(device);
  const [plain, ruled, empty] = (await findFreePorts(3)) as [number, number, number];
  await deploy(device, memberPort, [plain, ruled, empty]);
  const rows: Row[] = [
    { key: 'plain', label: 'service without rules', url: `http://127.0.0.1:${plain}`, results: [] },
    { key: 'rules', label: 'the same service with the three-branch rule', url: `http://127.0.0.1:${ruled}`, results: [] },
    {
      key: 'empty',
      label: 'the same service with a rule that does nothing (`when HTTP_REQUEST {}`)',
      url: `http://127.0.0.1:${empty}`,
      results: [],
    },
  ];
  const load = (url: string, seconds: number) => measureLoad({ url, path: '/', connections: CONNECTIONS, durationSeconds: seconds }, [pid]);
  if (WARMUP > 0) for (const row of rows) await load(row.url, WARMUP);
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved rounds, the order turned each round: a slow moment of the machine does not land on one service only.
    for (const row of round % 2 ? [...rows].reverse() : rows) {
      const result = await load(row.url, DURATION);
      row.results.push(result);
      log(
        `round ${round + 1}/${ROUNDS} ${row.key}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms, ` +
          `${result.cpuUsPerRequest?.toFixed(0)} µs CPU/request, non-2xx ${result.non2xx}, errors ${result.errors}`,
      );
    }
  }
  const table = irulesTable(rows, { connections: CONNECTIONS, duration: DURATION, rounds: ROUNDS, warmup: WARMUP });
  console.log(table);
  if (values.readme && !PROFILE_DIR) {
    writeReadmeBlock('bench:irules', table);
    console.log('\nWritten into docs/benchmarks.md (bench:irules block).');
  } else if (values.readme) {
    console.log('\ndocs/benchmarks.md left as it is (a profiled run).');
  }
}

/** The block: a row per service (medians) and the rule's cost in requests per second and CPU per request. */
function irulesTable(
  rows: readonly Pick<Row, 'key' | 'label' | 'results'>[],
  run: { connections: number; duration: number; rounds: number; warmup: number },
): string {
  const med = (row: (typeof rows)[number], pick: (r: LoadResult) => number) => median(row.results.map(pick));
  const [plain, rules] = [rows.find((r) => r.key === 'plain')!, rows.find((r) => r.key === 'rules')!];
  const lines = [
    `GET / through a deployed service of the device role (its own process) to one member (a trivial node:http server, ` +
      `its own process); autocannon in its own process, \`-c ${run.connections} -d ${run.duration}\`, keep-alive; ` +
      `${run.rounds} interleaved round${run.rounds === 1 ? '' : 's'} after a ${run.warmup} s warm-up each, medians; ` +
      `CPU per request of the device process from /proc. ${revision()}, node ${process.version}, ${cpus().length} cores, ` +
      `${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| service | req/s | p99 ms | CPU µs/request | non-2xx / errors |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const bad = row.results.reduce((sum, x) => sum + x.non2xx, 0);
    const errors = row.results.reduce((sum, x) => sum + x.errors, 0);
    lines.push(
      `| ${row.label} | ${med(row, (r) => r.rps).toFixed(0)} | ${med(row, (r) => r.p99Ms).toFixed(1)} | ` +
        `${med(row, (r) => r.cpuUsPerRequest ?? Number.NaN).toFixed(0)} | ${bad} / ${errors} |`,
    );
  }
  const cpu = (row: (typeof rows)[number]) => med(row, (r) => r.cpuUsPerRequest ?? Number.NaN);
  const percent = (x: number) => (Number.isFinite(x) ? `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)} %` : 'n/a');
  const costOf = (row: (typeof rows)[number]) => 1 - med(row, (r) => r.rps) / med(plain, (r) => r.rps);
  const rpsCost = costOf(rules);
  const empty = rows.find((r) => r.key === 'empty');
  const goal = [
    `- the three-branch rule's cost: requests per second ${percent(-rpsCost)}, CPU per request ${percent(cpu(rules) / cpu(plain) - 1)} ` +
      `(goal: a cost under 20 %): ${Number.isFinite(rpsCost) ? (rpsCost < 0.2 ? 'met' : '**not met**') : 'not measured'}`,
    ...(empty
      ? [
          `- a rule that does nothing: requests per second ${percent(-costOf(empty))}, CPU per request ${percent(cpu(empty) / cpu(plain) - 1)} ` +
            '(what running any rule on a request costs, before its commands)',
        ]
      : []),
  ].join('\n');
  return [...lines, '', 'Goal:', '', goal].join('\n');
}

try {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  await run();
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await children.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (PROFILE_DIR) {
  for (const file of profilesWritten(PROFILE_DIR, process.pid, []))
    console.log(`profile: ${file}  (node scripts/bench/top-frames.ts ${file} --skip-ms 2000)`);
}
process.exitCode = exitCode;
