// Benchmark (not a test): the mapping role alone (request validation on, as always; response validation
// off) against a minimal node:http server answering the same bytes (scripts/bench/baseline-replay.ts),
// each in its own process, loaded alternately in one run by the same closed-loop keep-alive generator.
// Goal (issue 9): at least 0.75x the baseline's requests per second on GET list.
//
//   npm run bench:mapping [-- --requests 20000 --concurrency 64 --rounds 3 --warmup 2000
//                            --scenarios get-one,get-list,post-valid,post-invalid --cpu-prof <dir> --no-readme]
//
// A full run without --cpu-prof writes its table into the README (`<!-- bench:mapping -->`).
// --cpu-prof <dir> starts the mapping role with `node --cpu-prof --cpu-prof-dir=<dir>`; read the profile
// with `node scripts/bench/top-frames.ts <dir>/<file>.cpuprofile`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import type { RecordedAnswer } from './baseline-replay.ts';
import { median, percentile, runLoad } from '../../src/lib/load-generator.ts';
import { childProcesses } from './processes.ts';
import { writeReadmeBlock } from './readme-block.ts';

const { values } = parseArgs({
  allowNegative: true,
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2000' },
    scenarios: { type: 'string', default: 'get-one,get-list,post-valid,post-invalid' },
    'cpu-prof': { type: 'string' },
    readme: { type: 'boolean', default: true },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const PROFILE_DIR = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);

/** The commit measured, and whether the working tree differs from it. */
function revision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: new URL('../../', import.meta.url), encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'commit unknown';
  return `commit ${head.stdout.trim()}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? ' with uncommitted changes' : ''}`;
}

type Request = { method: string; path: string; headers?: Record<string, string>; body?: string };
type Scenario = { name: string; label: string; request: Request; status: number };

/** The four scenarios of issue 9; bodies come from the spec's examples, so they stay valid as it changes. */
function scenarios(vesselId: string): Scenario[] {
  const spec = parse(readFileSync(new URL('../../specs/mapping.yaml', import.meta.url), 'utf8'));
  const chart = spec.paths['/api/charts'].post.requestBody.content['application/json'].examples.full.value as object;
  const json = { 'content-type': 'application/json' };
  return [
    {
      name: 'get-one',
      label: `GET one (\`/api/vessels/${vesselId}\`)`,
      request: { method: 'GET', path: `/api/vessels/${vesselId}` },
      status: 200,
    },
    { name: 'get-list', label: 'GET list (`/api/vessels`)', request: { method: 'GET', path: '/api/vessels' }, status: 200 },
    {
      name: 'post-valid',
      label: 'POST valid (`/api/charts`)',
      request: { method: 'POST', path: '/api/charts', headers: json, body: JSON.stringify(chart) },
      status: 201,
    },
    {
      name: 'post-invalid',
      label: 'POST invalid (`/api/charts`, unknown property)',
      request: { method: 'POST', path: '/api/charts', headers: json, body: JSON.stringify({ ...chart, captain: 'James Cook' }) },
      status: 400,
    },
  ];
}

/** Headers the baseline must not replay: they describe one connection or one moment. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Sends `request` once to the mapping role and records its answer, so the baseline can send the same bytes. */
async function record(base: string, scenario: Scenario): Promise<RecordedAnswer> {
  const { method, path, headers, body } = scenario.request;
  const response = await fetch(new URL(path, base), { method, ...(headers ? { headers } : {}), ...(body !== undefined ? { body } : {}) });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== scenario.status) {
    throw new Error(
      `${scenario.name}: the mapping role answered ${response.status}, expected ${scenario.status}: ${bytes.toString().slice(0, 300)}`,
    );
  }
  return {
    method,
    path,
    body: body ?? '',
    status: response.status,
    headers: Object.fromEntries([...response.headers].filter(([name]) => !PER_CONNECTION.has(name))),
    answer: bytes.toString('base64'),
  };
}

type Measurement = { rps: number; p99: number; unexpected: number };

async function measure(url: string, scenario: Scenario): Promise<Measurement> {
  const { method, path, headers, body } = scenario.request;
  const request = () => ({ method, path, ...(headers ? { headers } : {}), ...(body !== undefined ? { body } : {}) });
  if (WARMUP > 0) await runLoad({ targets: [url], requests: WARMUP, concurrency: CONCURRENCY, request });
  const result = await runLoad({ targets: [url], requests: REQUESTS, concurrency: CONCURRENCY, request });
  const unexpected = [...result.byStatus].filter(([status]) => status !== scenario.status).reduce((sum, [, n]) => sum + n, 0);
  return { rps: REQUESTS / result.seconds, p99: percentile(result.latenciesMs, 99), unexpected };
}

const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-mapping-'));
const children = childProcesses();
try {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const mapping = await children.portolan(
    'mapping',
    { PORTOLAN_MAPPING_PORT: '0', PORTOLAN_DATABASE: `sqlite:${join(dir, 'mapping.db')}`, PORTOLAN_VALIDATE_RESPONSES: 'false' },
    'mapping',
    PROFILE_DIR ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] } : {},
  );
  const vessels = (await (await fetch(new URL('/api/vessels', mapping))).json()) as { data: { id: string }[] };
  const wanted = values.scenarios.split(',').map((s) => s.trim());
  const chosen = scenarios(vessels.data[0]!.id).filter((s) => wanted.includes(s.name));
  if (chosen.length !== wanted.length)
    throw new Error(`--scenarios: choose from get-one, get-list, post-valid, post-invalid (got ${values.scenarios})`);
  const answers: RecordedAnswer[] = [];
  for (const scenario of chosen) answers.push(await record(mapping, scenario));
  writeFileSync(join(dir, 'answers.json'), JSON.stringify(answers));
  const baseline = await children.start(['scripts/bench/baseline-replay.ts'], { ANSWERS: join(dir, 'answers.json') }, /^READY (\S+)/);

  // One untimed pass first: the load generator itself and both servers are JIT-compiled before any
  // figure is kept (without it the first scenario's baseline reads about half its later figures).
  for (const scenario of chosen) for (const url of [baseline, mapping]) await measure(url, scenario);

  const runs = chosen.map(() => ({ baseline: [] as Measurement[], mapping: [] as Measurement[] }));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, baseline then mapping per scenario, so a slow moment of the machine hits both alike.
    for (const [k, scenario] of chosen.entries()) {
      runs[k]!.baseline.push(await measure(baseline, scenario));
      runs[k]!.mapping.push(await measure(mapping, scenario));
      process.stderr.write(
        `round ${round + 1}/${ROUNDS} ${scenario.name}: ${runs[k]!.mapping.at(-1)!.rps.toFixed(0)} vs ${runs[k]!.baseline.at(-1)!.rps.toFixed(0)} req/s\n`,
      );
    }
  }

  const lines = [
    `${REQUESTS} requests x ${ROUNDS} rounds per scenario and server (after ${WARMUP} warm-up requests each time), concurrency ${CONCURRENCY}, ` +
      `keep-alive, median of interleaved rounds; ${revision()}, node ${process.version}, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| scenario | baseline req/s | baseline p99 ms | mapping req/s | mapping p99 ms | x baseline | x per round (min-max) | unexpected status |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [k, scenario] of chosen.entries()) {
    const b = runs[k]!.baseline;
    const m = runs[k]!.mapping;
    const [bRps, mRps] = [median(b.map((x) => x.rps)), median(m.map((x) => x.rps))];
    const unexpected = [...b, ...m].reduce((sum, x) => sum + x.unexpected, 0);
    // The ratio within each round (baseline and mapping measured back to back) shows how steady the machine was.
    const perRound = m.map((x, i) => x.rps / b[i]!.rps);
    const spread = `${Math.min(...perRound).toFixed(2)}-${Math.max(...perRound).toFixed(2)}`;
    lines.push(
      `| ${scenario.label} | ${bRps.toFixed(0)} | ${median(b.map((x) => x.p99)).toFixed(1)} | ${mRps.toFixed(0)} | ` +
        `${median(m.map((x) => x.p99)).toFixed(1)} | ${(mRps / bRps).toFixed(2)} | ${spread} | ${unexpected} |`,
    );
  }
  const table = lines.join('\n');
  console.log(table);
  const full = chosen.length === 4;
  if (values.readme && full && !PROFILE_DIR) {
    writeReadmeBlock('bench:mapping', table);
    console.log('\nWritten into README.md (bench:mapping block).');
  } else if (values.readme) {
    console.log(`\nREADME.md left as it is (${PROFILE_DIR ? 'a profiled run' : 'not every scenario'}).`);
  }
} finally {
  await children.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (PROFILE_DIR) {
  for (const file of readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile'))) {
    console.log(`profile: ${join(PROFILE_DIR, file)}  (node scripts/bench/top-frames.ts ${join(PROFILE_DIR, file)})`);
  }
}
