// Benchmark (not a test) of `npm run mock`, issue 13 item 5: the Prism mocks of all eight specs started
//   - as before: eight `prism mock` CLI processes (@stoplight/prism-cli, launched by scripts/bench/prism-cli-process.ts as
//     the old `npm run mock` launched them, readiness probe included) behind the role fronts of mocks/prism-front.ts,
//     all under one parent (this file with --old-child);
//   - as now: `node mocks/cli.ts`, Prism's HTTP server as a library, one process.
// Each run starts each way in a fresh process tree (alternating, the old way first), on free ports given as
// PORTOLAN_MOCK_PORT_OFFSET, and measures the time from spawn until every role answers GET /health 200 (each role
// polled on fresh connections every 20 ms), then, after a second idle, the resident memory (VmRSS from /proc)
// summed over the whole process tree. Median and range over the runs.
//
//   npm run bench:mocks [-- --runs 3 --no-readme]
//
// A full run writes its table into docs/benchmarks.md (`<!-- bench:mocks -->`) when the page has that block.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findFreePorts } from '../../src/lib/free-ports.ts';
import { ROLE_NAMES, type RoleName } from '../../src/lib/roles.ts';
import { freeMockPortOffset, mockBasePort, mockPortOffset, resolveMockPorts } from '../../mocks/mock-ports.ts';
import { startMockFront } from '../../mocks/prism-front.ts';
import { planMocks } from '../../mocks/prism-plan.ts';
import { median } from '../../src/lib/load-generator.ts';
import { startPrism, waitUntilListening } from './prism-cli-process.ts';
import { writeReadmeBlock } from './readme-block.ts';

const OLD_CHILD = '--old-child';
const CLI = fileURLToPath(new URL('../../mocks/cli.ts', import.meta.url));
const SELF = fileURLToPath(import.meta.url);

/** The old way, in a child of the benchmark: one `prism mock` process per spec, then the role fronts; SIGTERM stops all. */
async function oldChild(): Promise<void> {
  const plan = planMocks([]);
  const offset = mockPortOffset(undefined, process.env);
  if (!offset.ok) throw new Error(offset.error);
  const ports = resolveMockPorts(
    plan.roles.map((r) => r.role),
    offset.value,
  );
  if (!ports.ok) throw new Error(ports.error);
  const internal = await findFreePorts(plan.interfaces.length);
  const children = plan.interfaces.map((interfaceName, i) => startPrism({ interfaceName, port: internal[i]!, logLevel: 'error' }));
  await Promise.all(children.map((child) => waitUntilListening(child)));
  const prismPorts = new Map(children.map((c) => [c.interfaceName, c.port]));
  const fronts = await Promise.all(plan.roles.map((role) => startMockFront(role, prismPorts, '127.0.0.1', ports.value[role.role])));
  process.once('SIGTERM', async () => {
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all(children.map((c) => c.stop()));
    process.exit(0);
  });
}

/** One GET on a fresh connection; true when it answers 200. */
function answers(url: string): Promise<boolean> {
  return new Promise((done) => {
    const req = request(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200));
      res.on('error', () => done(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(false));
    req.end();
  });
}

/** Every process of the tree under `root` (itself included), from /proc. */
function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // A process that ended while we looked.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parentOf) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

const rssMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

type Run = { startMs: number; rssMb: number; processes: number };

/** Starts one way in a fresh process group, waits until every role answers, measures, stops it. */
async function measure(args: string[]): Promise<Run> {
  const offset = await freeMockPortOffset();
  const ports = ROLE_NAMES.map((role) => mockBasePort(role) + offset);
  const env = { ...process.env, PORTOLAN_MOCK_PORT_OFFSET: String(offset) };
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const exited = once(child, 'exit');
  try {
    const died = exited.then(() => Promise.reject(new Error(`${args.join(' ')} exited before every role answered`)));
    const times = await Promise.race([
      Promise.all(
        ROLE_NAMES.map(async (_role: RoleName, i) => {
          while (!(await answers(`http://127.0.0.1:${ports[i]}/health`))) await new Promise((done) => setTimeout(done, 20));
          return performance.now() - t0;
        }),
      ),
      died,
    ]);
    await new Promise((done) => setTimeout(done, 1000));
    const tree = processTree(child.pid!);
    return { startMs: Math.max(...times), rssMb: tree.reduce((sum, pid) => sum + rssMb(pid), 0), processes: tree.length };
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
    if (child.exitCode === null && child.signalCode === null) await exited;
    clearTimeout(timer);
  }
}

function summary(runs: Run[]) {
  const show = (values: number[], unit: string, digits: number) =>
    `${median(values).toFixed(digits)} ${unit} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  return {
    processes: median(runs.map((r) => r.processes)),
    start: show(
      runs.map((r) => r.startMs / 1000),
      's',
      2,
    ),
    rss: show(
      runs.map((r) => r.rssMb),
      'MB',
      0,
    ),
  };
}

async function main() {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, 'no-readme': { type: 'boolean' } } });
  const count = Number(values.runs);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--runs must be a whole number of at least 1, got '${values.runs}'.`);
  const before: Run[] = [];
  const now: Run[] = [];
  for (let run = 1; run <= count; run++) {
    before.push(await measure([SELF, OLD_CHILD]));
    now.push(await measure([CLI]));
    console.error(
      `run ${run}/${count}: before ${before.at(-1)!.startMs.toFixed(0)} ms ${before.at(-1)!.rssMb.toFixed(0)} MB; now ${now.at(-1)!.startMs.toFixed(0)} ms ${now.at(-1)!.rssMb.toFixed(0)} MB`,
    );
  }
  const old = summary(before);
  const fresh = summary(now);
  const table = [
    '| Prism mocks of all eight specs | processes | start until every role answers: median (range) | total RSS: median (range) |',
    '|---|---|---|---|',
    `| before: eight \`prism mock\` CLI processes behind the role fronts | ${old.processes} | ${old.start} | ${old.rss} |`,
    `| now: one process, Prism's HTTP server as a library | ${fresh.processes} | ${fresh.start} | ${fresh.rss} |`,
    '',
    `${count} runs of each, alternating, each in a fresh process tree; RSS summed over the tree after 1 s idle. ${cpus().length} CPUs, Node ${process.version}. \`npm run bench:mocks\`.`,
  ].join('\n');
  console.log(table);
  if (!values['no-readme']) {
    try {
      writeReadmeBlock('bench:mocks', table);
      console.error('docs/benchmarks.md: bench:mocks block updated.');
    } catch (error) {
      console.error(`docs/benchmarks.md not updated: ${(error as Error).message}.`);
    }
  }
}

if (process.argv.includes(OLD_CHILD)) await oldChild();
else await main();
