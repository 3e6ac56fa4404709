// Benchmark (not a test) of interface C: issue 12's two numbers, with issue 22's relative upload-memory goal:
//   (a) processing throughput: a ~50 MB snapshot archive (the healthy fixture plus large syslog and JSON logs and
//       a connection table with random ids, so it compresses only about 4:1, as real logs with ids do) is built
//       once; each run times extractSnapshot + readSnapshotFolder + evaluateSnapshot with the shipped rule set,
//       into a fresh folder. MB/s of the compressed archive (median), and of what it unpacks to.
//   (b) upload memory: the reference system (`portolan start`, roles diagnostics and login, a fresh SQLite file
//       and data folder) in a child process; the benchmark logs in through the snapshot client
//       (src/cli/snapshot.ts) and streams a 500 MB multipart upload made by a generator (never in memory):
//       RSS before (median of VmRSS samples over 1 s), then the kernel's peak-RSS mark is reset
//       (`5` into /proc/<pid>/clear_refs) and the peak during the upload is the larger of VmHWM afterwards and
//       VmRSS sampled every 50 ms; growth = peak - before. A fresh child per run. The same upload into a bare
//       node:http server that pipes the body to a file, measured the same way in the same run, interleaved:
//       goal (issue 22) the reference system's growth at most 1.2x the bare server's (median of the per-run
//       ratios). The growth of both is mostly buffers that wait for V8's next collection, which comes after
//       about 64 MB of them (V8's external-memory trigger) unless the young generation fills first; so the
//       same process with a smaller V8 young generation (`node --max-semi-space-size=4`) is shown too.
// Part (b) needs the diagnostics role wired: while it answers 501 the benchmark stops with that message.
//
//   npm run bench:snapshots [-- --runs 5 --upload-runs 3 --only processing|upload --no-readme]
//
// A full run writes its table into docs/benchmarks.md (`<!-- bench:snapshots -->`) when the page has that block.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { cpSync, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { openSession, uploadSnapshotStream, type SnapshotSettings } from '../../src/cli/snapshot.ts';
import { evaluateSnapshot, extractSnapshot, loadRuleSetFile, readSnapshotFolder } from '../../src/interfaces/snapshots/engine/index.ts';
import { packFolder } from '../../src/interfaces/snapshots/engine/test-archive.ts';
import { HEALTHY_DIR } from '../../src/interfaces/snapshots/engine/test-snapshots.ts';
import { median } from '../../src/lib/load-generator.ts';
import { writeReadmeBlock } from './readme-block.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const MB = 1e6;
const SAMPLE_MS = 50;
/** Issue 22: a 500 MB upload grows Portolan's RSS at most this many times what it grows a bare node:http server's. */
const GOAL_RATIO = 1.2;

/** A deterministic stream of pseudo-random bytes (AES-CTR over zeros): the same archive on every run. */
function keystream(seed: number): (bytes: number) => Buffer {
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, seed), Buffer.alloc(16));
  return (bytes) => cipher.update(Buffer.alloc(bytes));
}

/** About 0.6 MB of log text (4000 lines): syslog lines of the data plane, or pino JSON lines of the device role, with random ids. */
function logChunk(random: (bytes: number) => Buffer, json: boolean, first: number): string {
  const lines: string[] = [];
  const noise = random(4000 * 40);
  for (let i = 0; i < 4000; i++) {
    const r = noise.subarray(i * 40, i * 40 + 40);
    const id = r.toString('hex', 0, 16);
    const client = `203.0.${r[16]}.${r[17]}:${1024 + r.readUInt16BE(18)}`;
    const ms = r.readUInt16BE(20) % 900;
    const t = first + i * 37;
    if (json) {
      const level = r[22]! < 2 ? 50 : r[22]! < 12 ? 40 : 30;
      lines.push(
        `{"level":${level},"time":${t},"service":"/Web_Prod/App_${(r[23]! % 6) + 1}/api_service","msg":"request completed","reqId":"${id}","client":"${client}","status":${level === 50 ? 502 : 200},"ms":${ms},"bytes":${r.readUInt32BE(24) % 200000}}`,
      );
    } else {
      const time = new Date(t).toISOString().slice(5, 19).replace('T', ' ');
      const severity = r[22]! < 1 ? 'err' : r[22]! < 8 ? 'warning' : 'info';
      lines.push(
        `${time} device-1 ${severity} tmm[${1000 + (r[23]! % 8)}]: 01260013:5: conn ${client} -> 10.0.3.10:443 req=${id} tls=${r.toString('base64', 24, 36)} rtt_us=${r.readUInt16BE(36)} bytes_in=${r.readUInt16BE(38)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Writes the benchmark's snapshot folder, sized to pack to about `targetMb`, and packs it; answers the archive's path and sizes. */
async function buildArchive(dir: string, targetMb: number) {
  const folder = join(dir, 'snapshot');
  cpSync(HEALTHY_DIR, folder, { recursive: true });
  // How well this text compresses, from a sample, to size the folder for `targetMb` compressed.
  const sample = logChunk(keystream(99), false, 0) + logChunk(keystream(98), true, 0);
  const ratio = Buffer.byteLength(sample) / gzipSync(sample).length;
  const chunks = Math.ceil(((targetMb * MB * ratio) / Buffer.byteLength(sample)) * 2);
  const files = [
    ...Array.from({ length: 8 }, (_, n) => `logs/ltm-${n}.log`),
    ...Array.from({ length: 6 }, (_, n) => `logs/device-${n}.log`),
    'commands/connections.txt',
  ];
  let unpackedBytes = 0;
  for (const [n, name] of files.entries()) {
    const out = createWriteStream(join(folder, name));
    const random = keystream(n + 1);
    for (let c = 0; c < Math.ceil(chunks / files.length); c++) {
      const text = logChunk(random, name.includes('device'), 1793611800000 + c * 150_000);
      unpackedBytes += Buffer.byteLength(text);
      if (!out.write(text)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
  }
  const archive = join(dir, 'snapshot.tgz');
  await packFolder(folder, archive);
  const count = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
  rmSync(folder, { recursive: true, force: true });
  return { archive, compressedBytes: statSync(archive).size, unpackedBytes, files: count };
}

type ProcessingRun = { totalMs: number; extractMs: number; readMs: number; evaluateMs: number; hits: number };

async function processingRuns(runs: number, targetMb: number) {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-snapshots-'));
  try {
    const loaded = await loadRuleSetFile();
    if (!loaded.ok) throw new Error(loaded.message);
    const { ruleSet } = loaded;
    process.stderr.write(`building a ~${targetMb} MB snapshot archive in ${dir} ...\n`);
    const built = await buildArchive(dir, targetMb);
    process.stderr.write(
      `archive: ${(built.compressedBytes / MB).toFixed(1)} MB, unpacks to ${(built.unpackedBytes / MB).toFixed(1)} MB in ${built.files} files\n`,
    );
    const results: ProcessingRun[] = [];
    // Run 0 warms the page cache and the code; it is not counted.
    for (let run = 0; run <= runs; run++) {
      const dest = join(dir, `run-${run}`);
      const t0 = performance.now();
      const extracted = await extractSnapshot(built.archive, dest);
      const t1 = performance.now();
      if (!extracted.ok) throw new Error(`the benchmark archive was refused: ${extracted.message}`);
      const read = await readSnapshotFolder(dest, ruleSet.reads);
      const t2 = performance.now();
      if (!read.ok) throw new Error(`the benchmark snapshot could not be read: ${read.message}`);
      const output = evaluateSnapshot(ruleSet, read.content);
      const t3 = performance.now();
      const last = { totalMs: t3 - t0, extractMs: t1 - t0, readMs: t2 - t1, evaluateMs: t3 - t2, hits: output.diagnostics.hit_count };
      if (run > 0) results.push(last);
      rmSync(dest, { recursive: true, force: true });
      process.stderr.write(
        `processing run ${run === 0 ? 'warm-up' : `${run}/${runs}`}: ${last.totalMs.toFixed(0)} ms (extract ${last.extractMs.toFixed(0)}, read ${last.readMs.toFixed(0)}, evaluate ${last.evaluateMs.toFixed(0)}), ${(built.compressedBytes / MB / (last.totalMs / 1000)).toFixed(1)} MB/s\n`,
      );
    }
    return { ...built, results, rules: ruleSet.rules.length, version: ruleSet.version };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A failure of part (b) that is no measurement: printed as it is. */
class NotMeasurable extends Error {}

/**
 * Resets the kernel's peak-RSS mark (VmHWM) of `pid` to its current RSS (Linux: `5` into clear_refs); false
 * when not allowed (then the sampled peak alone counts).
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Resident memory of a live process in MB (Linux /proc): now (VmRSS) and its peak so far (VmHWM). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: (kb('VmRSS') * 1024) / MB, hwm: (kb('VmHWM') * 1024) / MB };
}

/** For scale: a bare node:http server that logs anyone in and pipes an upload's body to a file, nothing else. */
const BARE_SERVER = `
import { createServer } from 'node:http';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
let n = 0;
const diagnostics = createServer(async (req, res) => {
  if (req.method !== 'POST') return res.writeHead(404).end();
  await pipeline(req, createWriteStream(process.env.PORTOLAN_SNAPSHOT_DATA_DIR + '-' + ++n));
  res.writeHead(302, { location: '/snapshot-analyzer/api/snapshots/' + n }).end();
});
const login = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(302, { 'set-cookie': ['ssosession=bare; Path=/', 'sso_completed=1; Path=/'], location: '/' }).end());
});
diagnostics.listen(0, '127.0.0.1');
login.listen(0, '127.0.0.1');
await Promise.all([once(diagnostics, 'listening'), once(login, 'listening')]);
console.log('diagnostics http://127.0.0.1:' + diagnostics.address().port);
console.log('login http://127.0.0.1:' + login.address().port);
console.log('Portolan is running');
process.on('SIGTERM', () => process.exit(0));
`;

type Target = 'reference' | 'reference-small-young' | 'bare';

/** The V8 setting of the upload-heavy deployment the docs recommend (docs/interfaces/snapshots.md) (its own process for the diagnostics and login roles). */
const SMALL_YOUNG_GENERATION = '--max-semi-space-size=4';

/**
 * `portolan start` with the diagnostics and login roles on free ports (or the bare server), in a child
 * process; resolves with their URLs once it says it runs.
 */
async function startTarget(dir: string, target: Target): Promise<{ child: ChildProcess; diagnostics: string; login: string }> {
  const args =
    target === 'bare'
      ? ['--input-type=module', '-e', BARE_SERVER]
      : [...(target === 'reference-small-young' ? [SMALL_YOUNG_GENERATION] : []), 'src/cli/main.ts', 'start'];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      PORTOLAN_ROLES: 'diagnostics,login',
      PORTOLAN_DIAGNOSTICS_PORT: '0',
      PORTOLAN_LOGIN_PORT: '0',
      PORTOLAN_DATABASE: `sqlite:${join(dir, 'portolan.db')}`,
      PORTOLAN_SNAPSHOT_DATA_DIR: join(dir, 'snapshots'),
      PORTOLAN_SNAPSHOT_MAX_BYTES: String(4 * 1024 ** 3),
      PORTOLAN_ADMIN_PASSWORD: 'bench-admin',
      PORTOLAN_LOG_LEVEL: 'silent',
      PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const said: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => said.push(chunk.toString()));
  const urls: Record<string, string> = {};
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const role = /^(diagnostics|login)\s+(http:\/\/\S+)/.exec(line);
      if (role) urls[role[1]!] = role[2]!;
      if (line.startsWith('Portolan is running')) resolve({ child, diagnostics: urls.diagnostics!, login: urls.login! });
    });
    lines.on('close', () =>
      reject(
        new NotMeasurable(
          `${target === 'bare' ? 'the bare server' : 'portolan start'} exited before it was running: ${cause(said.join(''))}`,
        ),
      ),
    );
  });
}

/** What a child that died said: its error lines (an uncaught error's name and message), else its last lines. */
function cause(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const errors = lines.filter((line) => /error/i.test(line));
  return (errors.length ? errors.slice(0, 3) : lines.slice(-3)).join(' | ');
}

async function stopTarget(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
}

/** `total` bytes of random-ish data, made as they are pulled: views of one 4 MiB block, never the whole body. */
async function* generatedBody(total: number): AsyncGenerator<Uint8Array> {
  const block = keystream(7)(4 * 1024 * 1024);
  const chunk = 64 * 1024;
  for (let sent = 0; sent < total; sent += chunk) {
    const offset = sent % block.length;
    yield block.subarray(offset, offset + Math.min(chunk, total - sent, block.length - offset));
  }
}

type UploadRun = {
  baseline: number;
  peak: number;
  growth: number;
  /** Whether the peak includes the kernel's VmHWM (reset before the upload), not only the 50 ms samples. */
  exactPeak: boolean;
  seconds: number;
  clientGrowth: number;
};

async function uploadRun(uploadMb: number, target: Target): Promise<UploadRun> {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-upload-'));
  let started: Awaited<ReturnType<typeof startTarget>> | undefined;
  try {
    started = await startTarget(dir, target);
    const pid = started.child.pid!;
    const settings: SnapshotSettings = {
      diagnosticsUrl: started.diagnostics,
      loginUrl: started.login,
      user: 'admin',
      password: 'bench-admin',
      credentialVars: 'the benchmark account',
    };
    const session = await openSession(settings);
    if (!session.ok) {
      if (session.status === 501)
        throw new NotMeasurable(
          'the login role answers 501: interface C is not implemented (wired) yet, so part (b) cannot run. Run it again once the diagnostics role is wired.',
        );
      throw new NotMeasurable(`cannot log in to the reference system: ${session.message}`);
    }
    // A small upload first: the role must accept uploads before a 500 MB body is sent at it.
    const probe = await uploadSnapshotStream(session, { body: generatedBody(1024), size: 1024, fileName: 'probe.bin' });
    if (!probe.ok) {
      if (probe.status === 501)
        throw new NotMeasurable(
          'the diagnostics role answers 501 to an upload: it is not implemented (wired) yet, so part (b) cannot run.',
        );
      throw new NotMeasurable(`the probe upload failed: ${probe.message}`);
    }
    const samples: number[] = [];
    const clientSamples: number[] = [];
    const sample = () => {
      samples.push(memoryOf(pid).rss);
      clientSamples.push(process.memoryUsage.rss() / MB);
    };
    const timer = setInterval(sample, SAMPLE_MS);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = samples.length;
    const exactPeak = resetPeak(pid);
    const t0 = performance.now();
    const total = uploadMb * MB;
    const uploaded = await uploadSnapshotStream(session, { body: generatedBody(total), size: total, fileName: 'bench-500mb.bin' });
    const seconds = (performance.now() - t0) / 1000;
    sample();
    const hwm = memoryOf(pid).hwm;
    clearInterval(timer);
    if (!uploaded.ok) throw new NotMeasurable(`the ${uploadMb} MB upload failed: ${uploaded.message}`);
    const baseline = median(samples.slice(0, before));
    const peak = Math.max(...samples.slice(before), ...(exactPeak ? [hwm] : []));
    return {
      baseline,
      peak,
      growth: peak - baseline,
      exactPeak,
      seconds,
      clientGrowth: Math.max(...clientSamples.slice(before)) - median(clientSamples.slice(0, before)),
    };
  } finally {
    if (started) await stopTarget(started.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The commit measured, and whether the working tree differs from it. */
function revision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'commit unknown';
  return `commit ${head.stdout.trim()}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? ' with uncommitted changes' : ''}`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    allowNegative: true,
    options: {
      runs: { type: 'string', default: '5' },
      'upload-runs': { type: 'string', default: '3' },
      'size-mb': { type: 'string', default: '50' },
      'upload-mb': { type: 'string', default: '500' },
      only: { type: 'string' },
      readme: { type: 'boolean', default: true },
    },
  });
  const runs = Number(values.runs);
  const uploadRuns = Number(values['upload-runs']);
  const [sizeMb, uploadMb] = [Number(values['size-mb']), Number(values['upload-mb'])];
  const range = (xs: number[], digits = 0) =>
    `${median(xs).toFixed(digits)} | ${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;
  const rows: string[] = [];
  let problem: string | undefined;
  let goal: string | undefined;

  if (values.only !== 'upload') {
    const p = await processingRuns(runs, sizeMb);
    const compressed = p.compressedBytes / MB;
    const unpacked = p.unpackedBytes / MB;
    rows.push(
      `| (a) processing: extract + read + evaluate, MB/s of the ${compressed.toFixed(1)} MB archive | ${range(
        p.results.map((r) => compressed / (r.totalMs / 1000)),
        1,
      )} | |`,
      `| &nbsp;&nbsp;the same, MB/s of what it unpacks to (${unpacked.toFixed(1)} MB, ${p.files} files) | ${range(
        p.results.map((r) => unpacked / (r.totalMs / 1000)),
        1,
      )} | |`,
      `| &nbsp;&nbsp;extract, ms | ${range(p.results.map((r) => r.extractMs))} | |`,
      `| &nbsp;&nbsp;read (the files the rules read, at most 4 MiB each, 64 MiB in all), ms | ${range(p.results.map((r) => r.readMs))} | |`,
      `| &nbsp;&nbsp;evaluate (rule set ${p.version}, ${p.rules} rules; ${p.results[0]!.hits} of them hit), ms | ${range(p.results.map((r) => r.evaluateMs))} | |`,
    );
  }
  if (values.only !== 'processing') {
    const uploads: UploadRun[] = [];
    const tuned: UploadRun[] = [];
    const bare: UploadRun[] = [];
    try {
      // Interleaved with the bare server's runs, so a slow moment of the machine hits both alike.
      for (let run = 1; run <= uploadRuns; run++) {
        uploads.push(await uploadRun(uploadMb, 'reference'));
        tuned.push(await uploadRun(uploadMb, 'reference-small-young'));
        bare.push(await uploadRun(uploadMb, 'bare'));
        const u = uploads.at(-1)!;
        process.stderr.write(
          `upload run ${run}/${uploadRuns}: bare server growth ${bare.at(-1)!.growth.toFixed(1)} MB; with ${SMALL_YOUNG_GENERATION} ${tuned.at(-1)!.growth.toFixed(1)} MB; reference baseline ${u.baseline.toFixed(0)} MB, peak ${u.peak.toFixed(0)} MB, growth ${u.growth.toFixed(1)} MB, ${(uploadMb / u.seconds).toFixed(0)} MB/s\n`,
        );
      }
      // Each run's ratio against the bare server's run next to it, so a slow moment of the machine hits both alike.
      const ratios = uploads.map((u, i) => u.growth / bare[i]!.growth);
      const tunedRatios = tuned.map((u, i) => u.growth / bare[i]!.growth);
      const ratio = median(ratios);
      goal = `upload memory: Portolan's RSS growth is ${ratio.toFixed(2)}x the bare node:http server's (median of ${uploadRuns} runs; goal ≤ ${GOAL_RATIO}x): ${ratio <= GOAL_RATIO ? 'met' : 'NOT met'}`;
      const peakHow = uploads.every((u) => u.exactPeak)
        ? `VmHWM, reset before the upload, and VmRSS sampled every ${SAMPLE_MS} ms`
        : `VmRSS sampled every ${SAMPLE_MS} ms`;
      rows.push(
        `| (b) upload of ${uploadMb} MB (streamed multipart): Portolan RSS before, MB | ${range(uploads.map((u) => u.baseline))} | |`,
        `| &nbsp;&nbsp;Portolan peak RSS during the upload (${peakHow}), MB | ${range(uploads.map((u) => u.peak))} | |`,
        `| &nbsp;&nbsp;Portolan RSS growth, MB | ${range(
          uploads.map((u) => u.growth),
          1,
        )} | |`,
        `| &nbsp;&nbsp;a bare node:http server piping the same upload to a file, RSS growth, MB | ${range(
          bare.map((u) => u.growth),
          1,
        )} | |`,
        `| &nbsp;&nbsp;**Portolan growth / bare server growth** (per run) | ${range(ratios, 2)} | ≤ ${GOAL_RATIO}: ${ratio <= GOAL_RATIO ? 'met' : '**not met**'} |`,
        `| &nbsp;&nbsp;Portolan with \`node ${SMALL_YOUNG_GENERATION}\` (the upload process the docs recommend): RSS growth, MB | ${range(
          tuned.map((u) => u.growth),
          1,
        )} | |`,
        `| &nbsp;&nbsp;the same / bare server growth (per run) | ${range(tunedRatios, 2)} | |`,
        `| &nbsp;&nbsp;upload rate: Portolan / with \`${SMALL_YOUNG_GENERATION}\` / bare server, MB/s | ${[uploads, tuned, bare]
          .map((xs) => median(xs.map((u) => uploadMb / u.seconds)).toFixed(0))
          .join(' / ')} | | |`,
        `| &nbsp;&nbsp;client (this process) RSS growth, MB | ${range(
          uploads.map((u) => u.clientGrowth),
          1,
        )} | |`,
      );
    } catch (error) {
      if (!(error instanceof NotMeasurable)) throw error;
      problem = `(b) upload memory: ${error.message}`;
    }
  }

  const ran = [
    ...(values.only === 'upload' ? [] : [`${runs} processing runs after a warm-up`]),
    ...(values.only === 'processing'
      ? []
      : [`${uploadRuns} upload runs (a fresh process each; default, ${SMALL_YOUNG_GENERATION} and the bare server interleaved)`]),
  ];
  const table = [
    `${ran.join(', ')}; median and range; ${revision()}, node ${process.version}, ` +
      `${cpus().length} cores, temporary files in ${tmpdir()}, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| measure | median | min-max | goal |',
    '|---|---:|---:|---|',
    ...rows,
  ].join('\n');
  if (rows.length > 0) console.log(table);
  if (goal) console.log(`\n${goal}`);
  if (problem) {
    console.error(`\n${problem}`);
    return 1;
  }
  if (values.readme && values.only === undefined && sizeMb === 50 && uploadMb === 500) {
    try {
      writeReadmeBlock('bench:snapshots', table);
      console.log('\nWritten into docs/benchmarks.md (bench:snapshots block).');
    } catch {
      console.log('\ndocs/benchmarks.md has no <!-- bench:snapshots --> block: not written.');
    }
  }
  return 0;
}

process.exitCode = await main();
