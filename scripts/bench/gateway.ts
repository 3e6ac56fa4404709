// Benchmark (not a test) of the data path: GET /api/vessels through a proxy to a mapping-role
// member in a process of its own. The proxies, each in its own process and measured in this one run with
// the same load: a bare node:http reverse proxy (scripts/bench/baseline-proxy.ts, the 1.00x), HAProxy and
// nginx as anchors (scripts/bench/anchors.ts; installed from Debian when missing), and the Portolan gateway
// with its limiter off, on with the memory store, SQLite and Redis counters, and with the memory store at
// the default log level (info; every other row runs silent), plus the mapping role direct. Load: autocannon
// in its own process (scripts/bench/load.ts), keep-alive, every request with one of 1000 bearer tokens in
// turn (so the limiter counts each request, spread over 1000 windows, and limits none); interleaved rounds,
// medians; CPU per request of the process under test from /proc. A first row shows the load generator's
// headroom: autocannon against a trivial node:http server.
//
// Then the workers rows (scripts/bench/workers.ts): the same load against `portolan start --workers 1` and
// `--workers 2` with PORTOLAN_ROLES=gateway,mapping (the gateway's pool: the mapping role of the same system),
// the limiter on with SQLite counters (what --workers 2 takes by default), and the ratio workers 2 / workers 1.
//
//   npm run bench:gateway [-- --duration 5 --connections 50 --rounds 3 --warmup 1 --path /api/vessels
//                            --redis redis://127.0.0.1:6379|none --no-anchors --no-workers --only workers
//                            --cpu-prof <dir> --no-readme --help]
//
// Writes its tables into docs/benchmarks.md (`<!-- bench:gateway -->`, `<!-- bench:gateway-workers -->`) unless
// --no-readme or --cpu-prof; --only workers runs (and writes) the workers rows alone. --cpu-prof <dir> starts
// every gateway process with `node --cpu-prof --cpu-prof-dir=<dir>` (one profile per configuration, written
// when it stops; a --workers system: one per process under <dir>/workers-<N>); read one with
// `node scripts/bench/top-frames.ts <file> --skip-ms 2000`.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureAnchor, startAnchors, type AnchorKind } from './anchors.ts';
import { measureLoad, type LoadResult } from './load.ts';
import { childProcesses, type StartOptions } from './processes.ts';
import { writeReadmeBlock } from './readme-block.ts';
import { gatewayWorkers } from './gateway-workers.ts';
import { helpWhenAsked, median, profilesWritten, revision } from './run-facts.ts';
import { onlyWorkers, WORKERS_OPTIONS, WORKERS_PROFILE_DIRS } from './workers.ts';

const { values } = parseArgs({
  allowNegative: true,
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    path: { type: 'string', default: '/api/vessels' },
    tokens: { type: 'string', default: '1000' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    anchors: { type: 'boolean', default: true },
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
const PATH = values.path!;
const TOKENS = Number(values.tokens);
const REDIS = values.redis === 'none' ? undefined : values.redis!;
const PROFILE_DIR = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
for (const [name, value] of Object.entries({ duration: DURATION, connections: CONNECTIONS, rounds: ROUNDS, tokens: TOKENS }))
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`);

/** Whether a Redis server answers PING at `url` (within 2 s). */
async function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port || 6379), hostname || '127.0.0.1');
  socket.setTimeout(2000, () => socket.destroy());
  try {
    await once(socket, 'connect');
    socket.write('PING\r\n');
    const [data] = (await once(socket, 'data')) as [Buffer];
    return data.toString().startsWith('+PONG');
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

/** A trivial node:http server answering `ok`: what the load generator can push at most on this machine. */
const TRIVIAL_SERVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => console.log('READY http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

type Kind = 'headroom' | 'baseline' | 'anchor' | 'gateway' | 'direct';
type Target = { key: string; label: string; kind: Kind; url?: string; pids: number[]; skipped?: string };
type Row = Target & { results: LoadResult[] };

const log = (line: string) => process.stderr.write(`${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-gateway-'));
const children = childProcesses();
const anchors = startAnchors(dir);
let exitCode = 0;
const load = (url: string, durationSeconds: number, pids: number[] = []) =>
  measureLoad({ url, path: PATH, connections: CONNECTIONS, durationSeconds, rotateBearer: TOKENS }, pids);

/** The proxies' rows: the `bench:gateway` block. */
async function proxyRows(): Promise<void> {
  const targets: Target[] = [];
  const trivial = await children.start(['--input-type=module', '-e', TRIVIAL_SERVER], {}, /^READY (\S+)/);
  targets.push({
    key: 'trivial',
    label: 'load generator headroom: autocannon vs a trivial node:http server (answers `ok`)',
    kind: 'headroom',
    url: trivial,
    pids: [children.pidOf(trivial)],
  });

  const mapping = await children.portolan(
    'mapping',
    { PORTOLAN_MAPPING_PORT: '0', PORTOLAN_DATABASE: `sqlite:${join(dir, 'mapping.db')}` },
    'mapping',
  );
  const member = new URL(mapping).host;
  const baseline = await children.start(['scripts/bench/baseline-proxy.ts'], { UPSTREAM: member }, /^READY (\S+)/);
  targets.push({
    key: 'baseline',
    label: 'bare node:http reverse proxy (baseline)',
    kind: 'baseline',
    url: baseline,
    pids: [children.pidOf(baseline)],
  });

  const anchorLabels: Record<AnchorKind, string> = {
    haproxy: 'HAProxy{v}, one thread (`nbthread 1`), `http-reuse always`, keep-alive to the member',
    nginx: 'nginx{v}, one worker, upstream keepalive',
  };
  for (const kind of ['haproxy', 'nginx'] as const) {
    const label = anchorLabels[kind].replace('{v}', '');
    if (!values.anchors) {
      targets.push({ key: kind, label, kind: 'anchor', pids: [], skipped: 'skipped (--no-anchors)' });
      continue;
    }
    const ready = ensureAnchor(kind, log);
    if (!ready.ok) {
      log(`bench:gateway: ${ready.why}; the ${kind} row is skipped.`);
      targets.push({ key: kind, label, kind: 'anchor', pids: [], skipped: `skipped: ${ready.why}` });
      continue;
    }
    const anchor = await anchors
      .start(kind, { member, path: PATH, version: ready.version, connections: CONNECTIONS })
      .catch((error: Error) => error);
    if (anchor instanceof Error) {
      log(`bench:gateway: ${anchor.message}; the ${kind} row is skipped.`);
      targets.push({
        key: kind,
        label,
        kind: 'anchor',
        pids: [],
        skipped: `skipped: ${kind} did not start (${anchor.message.split('\n')[0]})`,
      });
      continue;
    }
    targets.push({
      key: kind,
      label: anchorLabels[kind].replace('{v}', ` ${anchor.version}`),
      kind: 'anchor',
      url: anchor.url,
      pids: anchor.workerPids,
    });
  }

  const profiled = (name: string): StartOptions =>
    PROFILE_DIR
      ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=gateway-${name}-${process.pid}.cpuprofile`] }
      : {};
  const gateway = async (key: string, label: string, env: Record<string, string>) => {
    const url = await children.portolan(
      'gateway',
      {
        PORTOLAN_GATEWAY_PORT: '0',
        PORTOLAN_DATABASE: `sqlite:${join(dir, `gateway-${key}.db`)}`,
        PORTOLAN_POOL_MEMBERS: member,
        PORTOLAN_RATE_LIMIT_ENABLED: 'true',
        PORTOLAN_RATE_LIMIT_STORE: 'memory',
        // Never limited: every request is counted, none refused.
        PORTOLAN_RATE_LIMIT_LIMIT: '1000000000',
        // A counter store counts as down (and the outage policy, memory, would count instead) only when it is
        // silent this long: the SQLite and Redis rows measure their store, not the fallback.
        PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS: '1000',
        ...env,
      },
      'gateway',
      profiled(key),
    );
    targets.push({ key, label, kind: 'gateway', url, pids: [children.pidOf(url)] });
  };
  await gateway('off', 'Portolan gateway, limiter off', { PORTOLAN_RATE_LIMIT_ENABLED: 'false' });
  await gateway('memory', `gateway, limiter memory, ${TOKENS} rotating tokens`, {});
  await gateway('sqlite', 'gateway, limiter SQLite counters (file)', { PORTOLAN_RATE_LIMIT_STORE: `sqlite:${join(dir, 'counters.db')}` });
  if (REDIS && (await redisAnswers(REDIS))) {
    await gateway('redis', 'gateway, limiter Redis counters', {
      PORTOLAN_RATE_LIMIT_STORE: REDIS,
      PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX: `bench:gateway:${process.pid}:${Date.now()}:`,
    });
  } else {
    const why = REDIS ? `skipped: no Redis answers at ${REDIS}` : 'skipped (--redis none)';
    if (REDIS) log(`bench:gateway: no Redis answers PING at ${REDIS}; the Redis row is skipped.`);
    targets.push({ key: 'redis', label: 'gateway, limiter Redis counters', kind: 'gateway', pids: [], skipped: why });
  }
  await gateway('info', 'gateway, limiter memory, log level info (the default; every other row: silent)', { PORTOLAN_LOG_LEVEL: 'info' });
  targets.push({ key: 'direct', label: 'mapping role direct (no proxy)', kind: 'direct', url: mapping, pids: [children.pidOf(mapping)] });

  const live = targets.filter((t) => t.url);
  // Warm-up: every process JIT-compiles its path (and the load generator its own) before a figure is kept.
  if (WARMUP > 0) for (const target of live) await load(target.url!, WARMUP);
  const rows: Row[] = targets.map((t) => ({ ...t, results: [] }));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved rounds: a slow moment of the machine does not land on one configuration only.
    for (const row of rows) {
      if (!row.url) continue;
      const result = await load(row.url, DURATION, row.pids);
      row.results.push(result);
      log(
        `round ${round + 1}/${ROUNDS} ${row.key}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms, ` +
          `${result.cpuUsPerRequest?.toFixed(0)} µs CPU/request, non-2xx ${result.non2xx}, errors ${result.errors}`,
      );
    }
  }

  const rps = (key: string) => {
    const row = rows.find((r) => r.key === key);
    return row?.results.length ? median(row.results.map((r) => r.rps)) : undefined;
  };
  const base = rps('baseline')!;
  const haproxy = rps('haproxy');
  const ratio = (x: number, of: number | undefined) => (of ? (x / of).toFixed(2) : 'n/a');
  const lines = [
    `GET ${PATH} through each proxy to a mapping-role member in its own process; autocannon in its own process, ` +
      `\`-c ${CONNECTIONS} -d ${DURATION}\`, keep-alive, each request with one of ${TOKENS} bearer tokens in turn; ` +
      `${ROUNDS} interleaved round${ROUNDS === 1 ? '' : 's'} after a ${WARMUP} s warm-up each, medians; CPU per request of the process under test ` +
      `(HAProxy: its one process; nginx: its worker) from /proc. Log level silent and no access log except where the row says info. ` +
      `${revision()}, node ${process.version}, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| configuration | req/s | p99 ms | x baseline | x HAProxy | CPU µs/request | non-2xx / errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    if (!row.results.length) {
      lines.push(`| ${row.label} | ${row.skipped ?? 'skipped'} | | | | | |`);
      continue;
    }
    const r = median(row.results.map((x) => x.rps));
    const p99 = median(row.results.map((x) => x.p99Ms));
    const cpu = median(row.results.map((x) => x.cpuUsPerRequest ?? Number.NaN));
    const bad = row.results.reduce((sum, x) => sum + x.non2xx, 0);
    const errors = row.results.reduce((sum, x) => sum + x.errors, 0);
    const [xBase, xHaproxy] = row.kind === 'headroom' ? ['', ''] : [ratio(r, base), ratio(r, haproxy)];
    lines.push(`| ${row.label} | ${r.toFixed(0)} | ${p99.toFixed(1)} | ${xBase} | ${xHaproxy} | ${cpu.toFixed(0)} | ${bad} / ${errors} |`);
  }

  const memory = rps('memory')!;
  const verdict = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? 'met' : '**not met**');
  const fastest = Math.max(
    ...rows.filter((r) => r.kind !== 'headroom' && r.results.length).map((r) => median(r.results.map((x) => x.rps))),
  );
  const fastestProxy = Math.max(
    ...rows.filter((r) => r.kind !== 'headroom' && r.kind !== 'direct' && r.results.length).map((r) => median(r.results.map((x) => x.rps))),
  );
  const headroom = rps('trivial')!;
  const [sqlite, redis, info] = [rps('sqlite'), rps('redis'), rps('info')];
  const loggingCost = info === undefined ? undefined : 1 - info / memory;
  const times = (x: number | undefined, of: number | undefined) => (x !== undefined && of ? `${(x / of).toFixed(2)}x` : 'n/a');
  const atLeast = (x: number | undefined, share: number, of: number | undefined) =>
    verdict(x === undefined || of === undefined ? undefined : x >= share * of);
  const goals = [
    `- gateway, limiter memory: ${times(memory, base)} baseline (goal ≥ 1.0x): ${atLeast(memory, 1, base)}`,
    `- gateway, limiter SQLite: ${times(sqlite, base)}, Redis: ${times(redis, base)} baseline (goal ≥ 0.9x each): ` +
      `SQLite ${atLeast(sqlite, 0.9, base)}, Redis ${atLeast(redis, 0.9, base)}`,
    `- gateway, limiter memory: ${times(memory, haproxy)} HAProxy (goal ≥ 0.6x): ${atLeast(memory, 0.6, haproxy)}`,
    `- logging cost, info against silent (limiter memory both): ${loggingCost === undefined ? 'n/a' : `${(loggingCost * 100).toFixed(1)} %`} ` +
      `(goal < 10 %): ${verdict(loggingCost === undefined ? undefined : loggingCost < 0.1)}`,
    `- load generator headroom: ${headroom.toFixed(0)} req/s against the trivial server, ${times(headroom, fastestProxy)} the fastest proxy ` +
      `(goal > 2x): ${verdict(headroom > 2 * fastestProxy)}; ${times(headroom, fastest)} the fastest row (the mapping role direct included)`,
  ];
  const table = [...lines, '', 'Goals:', '', ...goals].join('\n');
  console.log(table);
  if (values.readme && !PROFILE_DIR) {
    writeReadmeBlock('bench:gateway', table);
    console.log('\nWritten into docs/benchmarks.md (bench:gateway block).');
  } else if (values.readme) {
    console.log('\ndocs/benchmarks.md left as it is (a profiled run).');
  }
}

/** The workers rows: the `bench:gateway-workers` block. */
async function workerRows(): Promise<void> {
  const text = await gatewayWorkers(children, {
    dir,
    path: PATH,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    rounds: ROUNDS,
    warmupSeconds: WARMUP,
    tokens: TOKENS,
    profileDir: PROFILE_DIR,
    log,
  });
  console.log(`\n${text}`);
  if (values.readme && !PROFILE_DIR) {
    writeReadmeBlock('bench:gateway-workers', text);
    console.log('\nWritten into docs/benchmarks.md (bench:gateway-workers block).');
  }
}

try {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  if (!ONLY_WORKERS) await proxyRows();
  if (values.workers) await workerRows();
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await anchors.stop();
  await children.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (PROFILE_DIR) {
  for (const file of profilesWritten(PROFILE_DIR, process.pid, WORKERS_PROFILE_DIRS))
    console.log(`profile: ${file}  (node scripts/bench/top-frames.ts ${file} --skip-ms 2000)`);
}
process.exitCode = exitCode;
