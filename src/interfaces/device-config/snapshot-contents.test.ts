import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import t from 'tap';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import {
  evaluateSnapshot,
  extractSnapshot,
  loadRuleSetFile,
  readSnapshotFolder,
  snapshotContent,
  validateManifest,
} from '../snapshots/engine/index.ts';
import { readFolder } from '../snapshots/engine/test-archive.ts';
import type { TaskRow } from './declaration-store.ts';
import type { HostFacts } from './host-commands.ts';
import { uptimeText } from './host-commands.ts';
import { collectDeviceSnapshot, packSnapshot, type SnapshotLimits, type SnapshotSources } from './snapshot-source.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

const GiB = 1024 ** 3;
const HEALTHY_HOST: HostFacts = {
  uptimeSeconds: 42 * 86_400 + 3 * 3600 + 12 * 60,
  loadAverage: [0.2, 0.31, 0.29],
  disk: { filesystem: '/dev/sda1', mountedOn: '/var', totalBytes: 100 * GiB, freeBytes: 56 * GiB, availableBytes: 50 * GiB },
  memory: {
    source: 'proc-meminfo',
    totalKiB: 16_000_000,
    freeKiB: 2_000_000,
    sharedKiB: 100_000,
    buffCacheKiB: 7_000_000,
    availableKiB: 9_000_000,
    swap: { totalKiB: 4_000_000, freeKiB: 3_990_000 },
  },
};

/** Sources of a device with nothing deployed, no scripts and a healthy host; `overrides` replace any part. */
function sources(overrides: Partial<SnapshotSources> = {}): SnapshotSources {
  return {
    identity: { hostname: 'device-1.example.net', machineId: '9c2d3b1e-5f4a-4e6b-8a7c-1d2e3f4a5b6c' },
    version: '16.1.0',
    clock: createFakeClock(Date.parse('2026-11-02T09:30:00Z')),
    declaration: async () => undefined,
    dbVariables: async () => ({ 'dataplane.quic.log.level': 'Critical', 'quic.qlogging': 'disable', 'log.access.level': 'notice' }),
    scripts: async () => [],
    deployTasks: async () => [],
    hostFacts: async () => HEALTHY_HOST,
    ...overrides,
  };
}

/** The snapshot's files as text, in memory. */
async function filesOf(from: SnapshotSources, limits?: SnapshotLimits) {
  const snapshot = await collectDeviceSnapshot(from, limits);
  return Object.fromEntries(snapshot.files.map((f) => [f.path, f.body.toString('utf8')]));
}

/** The names of the shipped rules that hit on these files. */
function hits(files: Record<string, string>): string[] {
  const manifest = validateManifest(JSON.parse(files['manifest.json']!));
  if (!manifest.ok) throw new Error(manifest.message);
  return evaluateSnapshot(ruleSet, snapshotContent(manifest.manifest, files), 'hit').diagnostics.diagnostic.map((d) => d.name);
}

/** Packs, writes and extracts a snapshot with the engine; the folder. */
async function throughTheEngine(t: TapTest, from: SnapshotSources) {
  const root = await mkdtemp(join(tmpdir(), 'portolan-snapshot-contents-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'snapshot.tgz'), await buffer(packSnapshot(await collectDeviceSnapshot(from))));
  const extracted = await extractSnapshot(join(root, 'snapshot.tgz'), join(root, 'files'));
  if (!extracted.ok) throw new Error(extracted.message);
  return join(root, 'files');
}

t.test("the command outputs are read by the shipped health rules as a real device's would be", async (t) => {
  const healthy = await filesOf(sources());
  t.same(hits(healthy), ['declaration-missing'], 'a healthy host: no health rule hits (nothing is deployed)');
  t.equal(healthy['commands/uptime.txt'], ' 09:30:00 up 42 days,  3:12,  load average: 0.20, 0.31, 0.29\n');
  t.equal(
    healthy['commands/df.txt'],
    'Filesystem     1024-blocks      Used Available Capacity Mounted on\n/dev/sda1        104857600  46137344  52428800      47% /var\n',
    'capacity is used / (used + available), rounded up, as df computes it',
  );

  const sick = await filesOf(
    sources({
      hostFacts: async () => ({
        ...HEALTHY_HOST,
        uptimeSeconds: 400 * 86_400,
        disk: { ...HEALTHY_HOST.disk!, freeBytes: 1 * GiB, availableBytes: 1 * GiB },
        memory: { ...HEALTHY_HOST.memory, availableKiB: 800_000, swap: { totalKiB: 4_000_000, freeKiB: 1_000_000 } },
      }),
    }),
  );
  t.same(hits(sick).sort(), ['declaration-missing', 'disk-full', 'memory-pressure', 'swap-in-use', 'uptime-over-a-year']);

  const noMeminfo = await filesOf(
    sources({
      hostFacts: async () => ({
        ...HEALTHY_HOST,
        disk: undefined,
        memory: { source: 'runtime', totalKiB: 1000, freeKiB: 50, sharedKiB: 0, buffCacheKiB: 0, availableKiB: 50 },
      }),
    }),
  );
  t.notMatch(noMeminfo['commands/memory.txt'], /Swap:/, 'no swap line when the host does not say');
  t.ok(hits(noMeminfo).includes('memory-pressure'), 'the runtime totals are still read');
  t.match(
    noMeminfo['logs/snapshot.log'],
    /warning snapshot: commands\/df\.txt: the file system of the device's data directory could not be read/,
  );
  t.match(noMeminfo['logs/snapshot.log'], /notice snapshot: commands\/memory\.txt: no \/proc\/meminfo/);
});

t.test('uptime reads like procps at every length', async (t) => {
  const at = new Date('2026-11-02T09:30:05Z');
  t.equal(uptimeText(at, 59, [0, 0, 0]), ' 09:30:05 up 0 min,  load average: 0.00, 0.00, 0.00\n');
  t.equal(uptimeText(at, 86_400 + 5 * 60, [1, 2, 3]), ' 09:30:05 up 1 day, 5 min,  load average: 1.00, 2.00, 3.00\n');
  t.equal(
    uptimeText(at, 2 * 86_400 + 11 * 3600 + 7 * 60, [0.5, 0.25, 0.125]),
    ' 09:30:05 up 2 days, 11:07,  load average: 0.50, 0.25, 0.13\n',
  );
});

t.test('every name the device takes for a script object gives a file the engine takes, one per object', async (t) => {
  // The device refuses only `~` and `/` in names: case twins, backslashes, drive letters, control
  // characters, NFC and NFD spellings and 255-character names all exist on it.
  const names = ['A', 'a', 'x\\y', 'C:evil', '..', 'é', 'e\u0301', 'n'.repeat(255), 'ctl\u0001x', 'sp ace', '%41'];
  const scripts = [
    ...names.map((name) => ({ partition: 'Common', name, apiAnonymous: '' })),
    { partition: 'common', name: 'a', apiAnonymous: '' },
    { partition: 'ü'.repeat(64), name: 'ü'.repeat(255), apiAnonymous: '' },
  ];
  const dir = await throughTheEngine(t, sources({ scripts: async () => scripts }));
  const files = await readFolder(dir);
  const ruleFiles = Object.keys(files).filter((path) => path.startsWith('config/rules/'));
  t.equal(ruleFiles.length, scripts.length, 'one file per object, none collided');
  t.ok(
    ruleFiles.every((path) => /^config\/rules\/[^/~]+~[^/]+\.tcl$/.test(path) && path.length - 'config/rules/'.length <= 255),
    'each is <partition>~<name>.tcl within 255 characters',
  );
  t.ok(
    ruleFiles.includes('config/rules/Common~a.tcl') && ruleFiles.includes('config/rules/Common~%41.tcl'),
    'a plain name stays readable; its case twin has its capital encoded',
  );
  const read = await readSnapshotFolder(dir, ruleSet.reads);
  if (!read.ok) return t.fail(read.message);
  const empty = evaluateSnapshot(ruleSet, read.content, 'hit').diagnostics.diagnostic.find((d) => d.name === 'script-empty');
  t.equal(empty?.output.length, scripts.length, 'the engine sees every one as a script object');
});

t.test('script objects past the bounds are left out, and the snapshot says which', async (t) => {
  const scripts = Array.from({ length: 5 }, (_, i) => ({ partition: 'Common', name: `s${i}`, apiAnonymous: 'x'.repeat(100) }));
  const byCount = await filesOf(sources({ scripts: async () => scripts }), { maxScripts: 3, maxScriptBytes: 1_000_000 });
  t.same(
    Object.keys(byCount).filter((p) => p.startsWith('config/rules/')),
    ['config/rules/Common~s0.tcl', 'config/rules/Common~s1.tcl', 'config/rules/Common~s2.tcl'],
  );
  t.match(
    byCount['logs/snapshot.log'],
    /warning snapshot: config\/rules: 2 script objects left out \(at most 3 files and 1000000 bytes of script text\): \/Common\/s3, \/Common\/s4\n/,
  );
  const byBytes = await filesOf(sources({ scripts: async () => scripts }), { maxScripts: 100, maxScriptBytes: 250 });
  t.equal(Object.keys(byBytes).filter((p) => p.startsWith('config/rules/')).length, 2, 'two fit in 250 bytes');
});

t.test('the deployment log: one line per tenant result and warning, failures at err, newest 2000 lines, no forged lines', async (t) => {
  const at = Date.parse('2026-11-02T09:00:00Z');
  const task = (i: number, results: unknown[], state: TaskRow['state'] = 'done'): TaskRow => ({
    id: `task-${i}`,
    order: (at + i * 1000) * 1000 + i,
    state,
    request: {},
    record: { id: `task-${i}`, results },
  });
  const failed = {
    code: 422,
    message: 'declaration failed',
    response: "/T/A/s/pool: pool 'nope' does not exist\nFORGED line",
    tenant: 'T',
    host: 'h',
    runTime: 3,
  };
  const tasks = [
    task(2, [], 'in progress'),
    task(1, [{ code: 200, message: 'success', tenant: 'T', lineCount: 7, runTime: 4, warnings: ['/T/A/x: class Foo is not modelled'] }]),
    ...Array.from({ length: 120 }, () => task(0, [failed])),
  ];
  const files = await filesOf(sources({ deployTasks: async () => tasks }));
  const lines = files['logs/deployments.log']!.trimEnd().split('\n');
  t.equal(lines.length, 123);
  t.equal(
    lines[0],
    "2026-11-02T09:00:00.000Z device-1.example.net err appsvcs: task task-0: tenant T: 422 declaration failed: /T/A/s/pool: pool 'nope' does not exist FORGED line, 3 ms",
    'oldest first; a newline in a message cannot start a line',
  );
  t.same(lines.slice(-3), [
    '2026-11-02T09:00:01.000Z device-1.example.net info appsvcs: task task-1: tenant T: 200 success, 7 lines, 4 ms',
    '2026-11-02T09:00:01.000Z device-1.example.net warning appsvcs: task task-1: tenant T: /T/A/x: class Foo is not modelled',
    '2026-11-02T09:00:02.000Z device-1.example.net info appsvcs: task task-2: in progress',
  ]);
  t.ok(hits(files).includes('log-error-rate'), "100 or more failed tenants are the engine's error rate");

  const many = await filesOf(sources({ deployTasks: async () => Array.from({ length: 2100 }, () => task(0, [failed])) }));
  t.equal(many['logs/deployments.log']!.trimEnd().split('\n').length, 2000);
  t.match(many['logs/snapshot.log'], /notice snapshot: logs\/deployments\.log: the oldest 100 lines left out \(the newest 2000 kept\)/);
});

t.test('a host name the manifest cannot hold is made into one', async (t) => {
  for (const [given, manifest] of [
    ['-dev-1.example.', 'dev-1.example'],
    ['', 'localhost'],
    ['a'.repeat(255), 'a'.repeat(253)],
  ] as const) {
    const files = await filesOf(sources({ identity: { hostname: given, machineId: 'm' } }));
    t.equal(JSON.parse(files['manifest.json']!).hostname, manifest);
    t.ok(validateManifest(JSON.parse(files['manifest.json']!)).ok);
  }
});
