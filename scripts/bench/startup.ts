// Benchmark (not a test): how fast the reference system, the MSW stateful handlers and a Prism mock start.
// Each run, in turn and each in a fresh process:
//   - `portolan start` (every role, free ports picked here, a fresh SQLite file): time from spawn until each
//     role answers `GET /health` 200, until the first `GET /api/vessels` through the gateway answers 200,
//     and its resident memory (VmRSS from /proc) once it has been idle for a second;
//   - a child that calls `createStatefulHandlers()` (mocks/stateful-handlers.ts, every spec): time from
//     its process start (performance.now(), so Node's own boot is in it) until the promise resolves, with
//     Node's compile cache off, and again with NODE_COMPILE_CACHE pointing at a warm cache;
//   - Prism mocking specs/mapping.yaml as `npm run mock` runs it, in-process (Prism's HTTP server as a library,
//     mocks/prism-server.ts), in a child of its own: time from spawn until `GET /api/vessels` answers 200;
//   - for scale, a bare node:http server: time from spawn until it answers.
// Wall times grow with whatever else the machine runs; the CPU time each process used by the moment it was
// ready moves much less, so compare those across runs on a shared machine.
// Goals (issue 14): every role within 1 s (0.5 s), idle RSS under 150 MB, MSW handlers under 0.5 s.
//
//   npm run bench:startup [-- --runs 5 --cpu-prof <dir> --no-readme]
//
// A full run without --cpu-prof writes its table into the README (`<!-- bench:startup -->`). --cpu-prof <dir>
// starts `portolan start` under `node --cpu-prof` (one profile per run, written at its stop); read one with
// `node scripts/bench/top-frames.ts <file>`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { flushCompileCache } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findFreePorts } from '../../src/lib/free-ports.ts';
import { ROLE_NAMES, type RoleName } from '../../src/lib/roles.ts';
import { median } from '../../src/lib/load-generator.ts';
import { childProcesses } from './processes.ts';
import { writeReadmeBlock } from './readme-block.ts';

const MSW_CHILD = '--msw-child';
const PRISM_CHILD = '--prism-child';

/** The child's side of the MSW measurement: builds the handlers, prints the time since its process started. */
async function mswChild(): Promise<void> {
  const { createStatefulHandlers } = await import('../../mocks/stateful-handlers.ts');
  const mocks = await createStatefulHandlers();
  const readyMs = performance.now();
  const { user, system } = process.cpuUsage();
  // Written now, not at exit: the parent stops this child with SIGTERM as soon as it reads the line below.
  flushCompileCache();
  console.log(`MSW_READY ${readyMs.toFixed(1)} ${((user + system) / 1000).toFixed(1)}`);
  await mocks.close();
}

/** The child's side of the Prism measurement: Prism for specs/mapping.yaml in this process; prints its port once it listens. */
async function prismChild(): Promise<void> {
  const { startPrismServer } = await import('../../mocks/prism-server.ts');
  const prism = await startPrismServer({ interfaceName: 'mapping', logLevel: 'error' });
  console.log(`PRISM_READY ${prism.port}`);
  process.once('SIGTERM', () => void prism.close().then(() => process.exit(0)));
}

/** How often a poller retries a target that does not answer yet. */
const POLL_MS = 5;

/** Resolves with the time (ms since `t0`) at which `GET url` first answers `status`. */
async function firstAnswer(url: string, status: number, t0: number, deadlineMs: number): Promise<number> {
  for (;;) {
    if (await answers(url, status)) return performance.now() - t0;
    if (performance.now() - t0 > deadlineMs) throw new Error(`${url} did not answer ${status} within ${deadlineMs} ms`);
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/** One GET on a fresh connection; true when it answers `status` (refused, reset or another status: false). */
function answers(url: string, status: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === status));
      res.on('error', () => done(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(false));
    req.end();
  });
}

/** Resident and peak resident memory of a live process, in MB (Linux /proc). */
function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU time (user and system) a live process has used so far, in ms (Linux /proc, clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime), counted from the state field (3).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Our child process whose command line contains `marker` (processes.ts spawns Node directly, so it is our child). */
function childPid(marker: string): number {
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) return Number(entry);
    } catch {
      // A process that ended while we looked.
    }
  }
  throw new Error(`no child process running ${marker}`);
}

type ReferenceRun = {
  health: Record<RoleName, number>;
  allHealthy: number;
  cpuMs: number;
  vessels: number;
  printed: number;
  rssMb: number;
  peakMb: number;
};

async function referenceRun(profileDir: string | undefined): Promise<ReferenceRun> {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-startup-'));
  const children = childProcesses();
  try {
    const free = await findFreePorts(ROLE_NAMES.length);
    const ports = Object.fromEntries(ROLE_NAMES.map((role, i) => [role, free[i]!])) as Record<RoleName, number>;
    const env: Record<string, string> = {
      PORTOLAN_DATABASE: `sqlite:${join(dir, 'p.db')}`,
      PORTOLAN_ADMIN_PASSWORD: 'bench-admin',
      PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
      ...Object.fromEntries(ROLE_NAMES.map((role) => [`PORTOLAN_${role.toUpperCase()}_PORT`, String(ports[role])])),
    };
    const url = (role: RoleName, path: string) => `http://127.0.0.1:${ports[role]}${path}`;
    const t0 = performance.now();
    const ready = children.start(
      ['src/cli/main.ts', 'start'],
      env,
      /^(Portolan is running)/,
      profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {},
    );
    let printed = NaN;
    // A child that dies early rejects `ready`; the pollers below would otherwise wait for their deadline.
    const died = ready.then(() => (printed = performance.now() - t0)).then(() => new Promise<never>(() => {}));
    const health = Object.fromEntries(
      await Promise.race([
        Promise.all(ROLE_NAMES.map(async (role) => [role, await firstAnswer(url(role, '/health'), 200, t0, 30_000)] as const)),
        died,
      ]),
    ) as Record<RoleName, number>;
    // Read at once: CPU time is what a busy machine changes least (wall times grow with its load).
    const pid = childPid('src/cli/main.ts');
    const cpuMs = cpuMsOf(pid);
    const vessels = await firstAnswer(url('gateway', '/api/vessels'), 200, t0, 30_000);
    await ready;
    await new Promise((done) => setTimeout(done, 1000));
    return { health, allHealthy: Math.max(...Object.values(health)), cpuMs, vessels, printed, ...memoryOf(pid) };
  } finally {
    await children.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type MswRun = { inProcess: number; cpuMs: number; fromSpawn: number };

/** `compileCache`: a NODE_COMPILE_CACHE directory for the child (an integrator's test run can set one); none: off. */
async function mswRun(compileCache?: string): Promise<MswRun> {
  const children = childProcesses();
  try {
    const env: Record<string, string> = compileCache ? { NODE_COMPILE_CACHE: compileCache } : { NODE_DISABLE_COMPILE_CACHE: '1' };
    const t0 = performance.now();
    const [inProcess, cpuMs] = (await children.start(['scripts/bench/startup.ts', MSW_CHILD], env, /^MSW_READY (\S+ \S+)/))
      .split(' ')
      .map(Number);
    return { inProcess: inProcess!, cpuMs: cpuMs!, fromSpawn: performance.now() - t0 };
  } finally {
    await children.stop();
  }
}

/** From spawn until the in-process Prism of a fresh child answers `GET /api/vessels` 200 (its port: the one it prints when it listens). */
async function prismRun(): Promise<number> {
  const children = childProcesses();
  try {
    const t0 = performance.now();
    const port = await children.start(['scripts/bench/startup.ts', PRISM_CHILD], { NODE_DISABLE_COMPILE_CACHE: '1' }, /^PRISM_READY (\d+)/);
    return await firstAnswer(`http://127.0.0.1:${port}/api/vessels`, 200, t0, 60_000);
  } finally {
    await children.stop();
  }
}

async function bareRun(): Promise<number> {
  const [port] = await findFreePorts(1);
  const t0 = performance.now();
  const child = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`], {
    stdio: 'ignore',
  });
  try {
    return await firstAnswer(`http://127.0.0.1:${port}/`, 200, t0, 10_000);
  } finally {
    child.kill('SIGTERM');
  }
}

/** The commit measured, and whether the working tree differs from it. */
function revision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: new URL('../../', import.meta.url), encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'commit unknown';
  return `commit ${head.stdout.trim()}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? ' with uncommitted changes' : ''}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    allowNegative: true,
    options: { runs: { type: 'string', default: '5' }, 'cpu-prof': { type: 'string' }, readme: { type: 'boolean', default: true } },
  });
  const RUNS = Number(values.runs);
  const profileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  const reference: ReferenceRun[] = [];
  const msw: MswRun[] = [];
  const mswCached: MswRun[] = [];
  const prism: number[] = [];
  const bare: number[] = [];
  const compileCache = mkdtempSync(join(tmpdir(), 'portolan-bench-compile-cache-'));
  try {
    await mswRun(compileCache); // fills the cache, which the timed runs read (as every test file after the first would)
    // Interleaved, so a slow moment of the machine hits every subject alike.
    for (let run = 1; run <= RUNS; run++) {
      bare.push(await bareRun());
      reference.push(await referenceRun(profileDir));
      msw.push(await mswRun());
      mswCached.push(await mswRun(compileCache));
      prism.push(await prismRun());
      const [r, m] = [reference.at(-1)!, msw.at(-1)!];
      process.stderr.write(
        `run ${run}/${RUNS}: roles healthy ${r.allHealthy.toFixed(0)} ms (CPU ${r.cpuMs.toFixed(0)} ms), vessels ${r.vessels.toFixed(0)} ms, RSS ${r.rssMb.toFixed(0)} MB, ` +
          `MSW ${m.inProcess.toFixed(0)} ms (CPU ${m.cpuMs.toFixed(0)} ms; cached ${mswCached.at(-1)!.inProcess.toFixed(0)} ms, CPU ${mswCached.at(-1)!.cpuMs.toFixed(0)} ms), Prism ${prism.at(-1)!.toFixed(0)} ms, bare ${bare.at(-1)!.toFixed(0)} ms\n`,
      );
    }
  } finally {
    rmSync(compileCache, { recursive: true, force: true });
  }

  const ms = (xs: number[]) => `${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;
  const lines = [
    `${RUNS} runs, median and range; every subject in a fresh process, runs interleaved; ${revision()}, node ${process.version}, ` +
      `${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}. Times from spawn, polled every ${POLL_MS} ms.`,
    '',
    '| measure | median | min-max | goal |',
    '|---|---:|---:|---|',
    `| \`portolan start\`: every role answers \`GET /health\` 200, ms | ${ms(reference.map((r) => r.allHealthy))} | under 1000 (500) |`,
    ...ROLE_NAMES.map((role) => `| &nbsp;&nbsp;${role} role, ms | ${ms(reference.map((r) => r.health[role]))} | |`),
    `| &nbsp;&nbsp;CPU time the process used by then, ms | ${ms(reference.map((r) => r.cpuMs))} | |`,
    `| \`portolan start\`: first \`GET /api/vessels\` through the gateway answers 200, ms | ${ms(reference.map((r) => r.vessels))} | |`,
    `| \`portolan start\`: RSS idle 1 s after start, MB | ${ms(reference.map((r) => r.rssMb))} | under 150 |`,
    `| \`portolan start\`: peak RSS during start, MB | ${ms(reference.map((r) => r.peakMb))} | |`,
    `| MSW stateful handlers (all specs) resolved, from the child's process start, ms | ${ms(msw.map((m) => m.inProcess))} | under 500 |`,
    `| &nbsp;&nbsp;CPU time the child used by then, ms | ${ms(msw.map((m) => m.cpuMs))} | |`,
    `| &nbsp;&nbsp;the same, from spawn (the parent's clock), ms | ${ms(msw.map((m) => m.fromSpawn))} | |`,
    `| &nbsp;&nbsp;the same with \`NODE_COMPILE_CACHE\` set (warm), from the child's process start, ms | ${ms(mswCached.map((m) => m.inProcess))} | |`,
    `| Prism mock of specs/mapping.yaml, in-process as \`npm run mock\` runs it (one child): \`GET /api/vessels\` answers 200, ms | ${ms(prism)} | |`,
    `| for scale: a bare node:http server answers, ms | ${ms(bare)} | |`,
  ];
  const table = lines.join('\n');
  console.log(table);
  if (values.readme && !profileDir) {
    writeReadmeBlock('bench:startup', table);
    console.log('\nWritten into README.md (bench:startup block).');
  } else if (values.readme) {
    console.log('\nREADME.md left as it is (a profiled run).');
  }
  if (profileDir) {
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      console.log(`profile: ${join(profileDir, file)}  (node scripts/bench/top-frames.ts ${join(profileDir, file)})`);
    }
  }
}

if (process.argv.includes(MSW_CHILD)) await mswChild();
else if (process.argv.includes(PRISM_CHILD)) await prismChild();
else await main();
