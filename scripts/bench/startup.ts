// Benchmark (not a test): how fast the reference system, the MSW stateful handlers and a Prism mock start.
// Each run, in turn and each in a fresh process:
//   - `npm start` as package.json runs it (`node [options] src/cli/main.ts start`: every role, free ports
//     picked here, a fresh SQLite file): time from spawn until each role answers `GET /health` 200, until
//     the first `GET /api/vessels` through the gateway answers 200, and its resident memory (VmRSS from
//     /proc) once it has been idle for a second;
//   - an integrator's test process using the MSW stateful handlers (mocks/stateful-handlers.ts, every spec):
//     a child that imports msw and the handlers, awaits `createStatefulHandlers()`, starts MSW's
//     `setupServer` and fetches `GET http://localhost:8081/api/charts` through it: time from its process
//     start (performance.now(), so Node's own boot is in it) until the handlers are built and until that
//     first answer, cold (Node's compile cache off: every TypeScript file stripped, every module compiled)
//     and again with NODE_COMPILE_CACHE pointing at a warm cache;
//   - Prism mocking specs/mapping.yaml as `npm run mock` runs it, in-process (Prism's HTTP server as a library,
//     mocks/prism-server.ts), in a child of its own: time from spawn until `GET /api/vessels` answers 200;
//   - for scale, a bare node:http server: time from spawn until it answers.
// Wall times grow with whatever else the machine runs; the CPU time each process used by the moment it was
// ready moves much less, so compare those across runs on a shared machine.
// Goals (issue 22 item 5): every role healthy in under 500 ms (median), idle RSS under 150 MB, the MSW
// stateful handlers answering their first request in under 500 ms cold.
//
//   npm run bench:startup [-- --runs 5 --cpu-prof <dir> --no-readme]
//
// A full run without --cpu-prof writes its table into docs/benchmarks.md (`<!-- bench:startup -->`). --cpu-prof <dir>
// starts `portolan start` under `node --cpu-prof` (one profile per run, written at its stop); read one with
// `node scripts/bench/top-frames.ts <file>`.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { RoleName } from '../../src/lib/roles.ts';

const PRISM_CHILD = '--prism-child';

/**
 * What the parent needs of the project, loaded by main() alone: a child of this file loads only node's
 * own modules and what it measures, as an integrator's process would.
 */
async function parentModules() {
  const [{ findFreePorts }, { ROLE_NAMES }, { median }, { childProcesses }, { writeReadmeBlock }] = await Promise.all([
    import('../../src/lib/free-ports.ts'),
    import('../../src/lib/roles.ts'),
    import('../../src/lib/load-generator.ts'),
    import('./processes.ts'),
    import('./readme-block.ts'),
  ]);
  return { findFreePorts, ROLE_NAMES, median, childProcesses, writeReadmeBlock };
}
type Parent = Awaited<ReturnType<typeof parentModules>>;

/**
 * An integrator's test process using the MSW stateful handlers (all eight specs): imports msw and the
 * handlers module named by its argument, builds them, starts MSW on them and asks the mapping role for its
 * charts through it. Prints, once it has the answer, the time since its process started and the CPU time it
 * used at both moments (handlers built, first answer). Plain JavaScript run with `node --input-type=module
 * -e`, so nothing of this bench is loaded in it.
 */
const MSW_CHILD = `
import { flushCompileCache } from 'node:module';
const moment = () => {
  const { user, system } = process.cpuUsage();
  return performance.now().toFixed(1) + ' ' + ((user + system) / 1000).toFixed(1);
};
const [{ setupServer }, { createStatefulHandlers }] = await Promise.all([import('msw/node'), import(process.argv[1])]);
const mocks = await createStatefulHandlers();
const built = moment();
const server = setupServer(...mocks.handlers);
server.listen({ onUnhandledFrame: 'error' });
const response = await fetch('http://localhost:8081/api/charts');
await response.arrayBuffer();
const answered = moment();
if (response.status !== 200) throw new Error('GET /api/charts through the MSW handlers answered ' + response.status);
// Written now, not at exit: the parent stops this child with SIGTERM as soon as it reads the line below.
flushCompileCache();
console.log('MSW_READY ' + built + ' ' + answered);
server.close();
await mocks.close();
`;

/** The child's side of the Prism measurement: Prism for specs/mapping.yaml in this process; prints its port once it listens. */
async function prismChild(): Promise<void> {
  const { startPrismServer } = await import('../../mocks/prism-server.ts');
  const prism = await startPrismServer({ interfaceName: 'mapping', logLevel: 'error' });
  console.log(`PRISM_READY ${prism.port}`);
  process.once('SIGTERM', () => void prism.close().then(() => process.exit(0)));
}

/** `npm start` as package.json says: `node [node options] src/cli/main.ts start`, split into node's options and the script's words. */
function npmStart(): { nodeArgs: string[]; args: string[] } {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts?: Record<string, string> })
    .scripts;
  const words = (scripts?.start ?? '').split(/\s+/).filter(Boolean);
  const script = words.indexOf('src/cli/main.ts');
  if (words[0] !== 'node' || script < 0)
    throw new Error(`package.json's start script is '${scripts?.start}': this bench expects 'node [options] src/cli/main.ts start'`);
  return { nodeArgs: words.slice(1, script), args: words.slice(script) };
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

async function referenceRun({ findFreePorts, ROLE_NAMES, childProcesses }: Parent, profileDir: string | undefined): Promise<ReferenceRun> {
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
    const { nodeArgs, args } = npmStart();
    const ready = children.start(args, env, /^(Portolan is running)/, {
      nodeArgs: [...nodeArgs, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    });
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

type MswRun = { built: number; builtCpu: number; answered: number; answeredCpu: number; fromSpawn: number };

/**
 * One MSW child on `handlers` (the module's URL: the sources' mocks/stateful-handlers.ts, or the built
 * package's .js). `compileCache`: a NODE_COMPILE_CACHE directory for it (an integrator's test run can set
 * one); none: off, every module compiled (and every TypeScript file stripped) as on a first run.
 */
async function mswRun({ childProcesses }: Parent, handlers: string, compileCache?: string): Promise<MswRun> {
  const children = childProcesses();
  try {
    const env: Record<string, string> = compileCache ? { NODE_COMPILE_CACHE: compileCache } : { NODE_DISABLE_COMPILE_CACHE: '1' };
    const t0 = performance.now();
    const [built, builtCpu, answered, answeredCpu] = (
      await children.start(['--input-type=module', '-e', MSW_CHILD, handlers], env, /^MSW_READY (\S+ \S+ \S+ \S+)/)
    )
      .split(' ')
      .map(Number);
    return { built: built!, builtCpu: builtCpu!, answered: answered!, answeredCpu: answeredCpu!, fromSpawn: performance.now() - t0 };
  } finally {
    await children.stop();
  }
}

/**
 * The package as `npm run build` makes it, built into a temporary folder (tsc with tsconfig.build.json,
 * then the data files the code reads, scripts/build.ts's list): what an integrator installs, JavaScript.
 * Its node_modules is the repository's. Returns the folder.
 */
async function buildPackage(): Promise<string> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-package-'));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // Type errors elsewhere in a working tree do not stop tsc from writing; a missing output does stop the bench.
  spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', dir], { cwd: root, stdio: 'ignore' });
  if (!existsSync(join(dir, 'mocks', 'stateful-handlers.js')))
    throw new Error(`tsc -p tsconfig.build.json --outDir ${dir} wrote no mocks/stateful-handlers.js`);
  const { runtimeAssetFiles } = await import('../build.ts');
  for (const file of runtimeAssetFiles()) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(root, file), join(dir, file));
  }
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** From spawn until the in-process Prism of a fresh child answers `GET /api/vessels` 200 (its port: the one it prints when it listens). */
async function prismRun({ childProcesses }: Parent): Promise<number> {
  const children = childProcesses();
  try {
    const t0 = performance.now();
    const port = await children.start(['scripts/bench/startup.ts', PRISM_CHILD], { NODE_DISABLE_COMPILE_CACHE: '1' }, /^PRISM_READY (\d+)/);
    return await firstAnswer(`http://127.0.0.1:${port}/api/vessels`, 200, t0, 60_000);
  } finally {
    await children.stop();
  }
}

async function bareRun({ findFreePorts }: Parent): Promise<number> {
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
  const parent = await parentModules();
  const { ROLE_NAMES, median } = parent;

  const reference: ReferenceRun[] = [];
  const msw: MswRun[] = [];
  const mswCached: MswRun[] = [];
  const mswPackage: MswRun[] = [];
  const prism: number[] = [];
  const bare: number[] = [];
  const sources = pathToFileURL(fileURLToPath(new URL('../../mocks/stateful-handlers.ts', import.meta.url))).href;
  const compileCache = mkdtempSync(join(tmpdir(), 'portolan-bench-compile-cache-'));
  const built = await buildPackage();
  const packaged = pathToFileURL(join(built, 'mocks', 'stateful-handlers.js')).href;
  try {
    await mswRun(parent, sources, compileCache); // fills the cache, which the timed runs read (as every test file after the first would)
    // Interleaved, so a slow moment of the machine hits every subject alike.
    for (let run = 1; run <= RUNS; run++) {
      bare.push(await bareRun(parent));
      reference.push(await referenceRun(parent, profileDir));
      msw.push(await mswRun(parent, sources));
      mswCached.push(await mswRun(parent, sources, compileCache));
      mswPackage.push(await mswRun(parent, packaged));
      prism.push(await prismRun(parent));
      const [r, m, w, p] = [reference.at(-1)!, msw.at(-1)!, mswCached.at(-1)!, mswPackage.at(-1)!];
      process.stderr.write(
        `run ${run}/${RUNS}: roles healthy ${r.allHealthy.toFixed(0)} ms (CPU ${r.cpuMs.toFixed(0)} ms), vessels ${r.vessels.toFixed(0)} ms, RSS ${r.rssMb.toFixed(0)} MB, ` +
          `MSW first answer ${m.answered.toFixed(0)} ms (CPU ${m.answeredCpu.toFixed(0)} ms; warm ${w.answered.toFixed(0)} ms; package ${p.answered.toFixed(0)} ms), ` +
          `Prism ${prism.at(-1)!.toFixed(0)} ms, bare ${bare.at(-1)!.toFixed(0)} ms\n`,
      );
    }
  } finally {
    rmSync(compileCache, { recursive: true, force: true });
    rmSync(built, { recursive: true, force: true });
  }

  const ms = (xs: number[]) => `${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;
  const { nodeArgs, args } = npmStart();
  const start = `\`npm start\` (\`${['node', ...nodeArgs, ...args].join(' ')}\`)`;
  const lines = [
    `${RUNS} runs, median and range; every subject in a fresh process, runs interleaved; ${revision()}, node ${process.version}, ` +
      `${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}. Times from spawn, polled every ${POLL_MS} ms.`,
    '',
    '| measure | median | min-max | goal |',
    '|---|---:|---:|---|',
    `| ${start}: every role answers \`GET /health\` 200, ms | ${ms(reference.map((r) => r.allHealthy))} | under 500 |`,
    ...ROLE_NAMES.map((role) => `| &nbsp;&nbsp;${role} role, ms | ${ms(reference.map((r) => r.health[role]))} | |`),
    `| &nbsp;&nbsp;CPU time the process used by then, ms | ${ms(reference.map((r) => r.cpuMs))} | |`,
    `| \`npm start\`: first \`GET /api/vessels\` through the gateway answers 200, ms | ${ms(reference.map((r) => r.vessels))} | |`,
    `| \`npm start\`: RSS idle 1 s after start, MB | ${ms(reference.map((r) => r.rssMb))} | under 150 |`,
    `| \`npm start\`: peak RSS during start, MB | ${ms(reference.map((r) => r.peakMb))} | |`,
    `| MSW stateful handlers (all specs), cold (compile cache off): first request through MSW answered, from the child's process start, ms | ${ms(msw.map((m) => m.answered))} | under 500 |`,
    `| &nbsp;&nbsp;CPU time the child used by then, ms | ${ms(msw.map((m) => m.answeredCpu))} | |`,
    `| &nbsp;&nbsp;the handlers built (\`createStatefulHandlers()\` resolved), ms | ${ms(msw.map((m) => m.built))} | |`,
    `| &nbsp;&nbsp;the first answer from spawn (the parent's clock), ms | ${ms(msw.map((m) => m.fromSpawn))} | |`,
    `| &nbsp;&nbsp;the first answer with \`NODE_COMPILE_CACHE\` set (warm), from the child's process start, ms | ${ms(mswCached.map((m) => m.answered))} | |`,
    `| &nbsp;&nbsp;CPU time the warm child used by then, ms | ${ms(mswCached.map((m) => m.answeredCpu))} | |`,
    `| &nbsp;&nbsp;the first answer from the built package (JavaScript, as installed), cold, ms | ${ms(mswPackage.map((m) => m.answered))} | |`,
    `| &nbsp;&nbsp;CPU time the package's child used by then, ms | ${ms(mswPackage.map((m) => m.answeredCpu))} | |`,
    `| Prism mock of specs/mapping.yaml, in-process as \`npm run mock\` runs it (one child): \`GET /api/vessels\` answers 200, ms | ${ms(prism)} | |`,
    `| for scale: a bare node:http server answers, ms | ${ms(bare)} | |`,
  ];
  const table = lines.join('\n');
  console.log(table);
  if (values.readme && !profileDir) {
    parent.writeReadmeBlock('bench:startup', table);
    console.log('\nWritten into docs/benchmarks.md (bench:startup block).');
  } else if (values.readme) {
    console.log('\ndocs/benchmarks.md left as it is (a profiled run).');
  }
  if (profileDir) {
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
      console.log(`profile: ${join(profileDir, file)}  (node scripts/bench/top-frames.ts ${join(profileDir, file)})`);
    }
  }
}

if (process.argv.includes(PRISM_CHILD)) await prismChild();
else await main();
