import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { evaluateSnapshot, selectDiagnostics } from './evaluate.ts';
import { extractSnapshot } from './extract.ts';
import { loadRuleSetFile, parseRuleSet } from './rule-set.ts';
import { readSnapshotFolder, snapshotContent } from './snapshot-content.ts';
import { snapshotArchive, TEST_MANIFEST } from './test-archive.ts';
import { healthyFiles } from './test-snapshots.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

/** The healthy snapshot with three problems: a full /var, an empty pool, a core file. */
const unhealthy = () => {
  const files = healthyFiles();
  files['commands/df.txt'] = files['commands/df.txt']!.replace('62% /var', '99% /var');
  files['config/declarations.json'] = files['config/declarations.json']!.replace(
    /"serverAddresses": \["10\.0\.3\.31", "10\.0\.3\.32"\]/,
    '"serverAddresses": []',
  );
  files['cores/tmm.1021.core.gz'] = '';
  return files;
};
const HITS = ['pool-without-members', 'disk-full', 'core-files-present'];

t.test('a snapshot archive extracts, is read from its folder and evaluated: the seed diagnostics object', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'portolan-evaluate-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'snapshot.tgz'), snapshotArchive(unhealthy()));
  const extracted = await extractSnapshot(join(root, 'snapshot.tgz'), join(root, 'files'));
  t.ok(extracted.ok, extracted.ok ? 'extracted' : extracted.message);
  const read = await readSnapshotFolder(join(root, 'files'), ruleSet.reads);
  if (!read.ok) return t.fail(read.message);
  t.notOk(read.content.text.has('cores/tmm.1021.core.gz'), 'a core file is listed, not read: no rule reads it');
  t.ok(read.content.paths.includes('cores/tmm.1021.core.gz'));

  const output = evaluateSnapshot(ruleSet, read.content, 'hit');
  t.same(output.system_information, {
    hostname: TEST_MANIFEST.hostname,
    chassis_serial: TEST_MANIFEST.chassisSerial,
    platform: TEST_MANIFEST.platform,
  });
  t.equal(output.version, '2026.12.2');
  t.match(output.diagnostics, { filter: 'hit', hit_count: 3, miss_count: ruleSet.rules.length - 3 });
  t.same(output.diagnostics.diagnostic.map((d) => d.name).sort(), [...HITS].sort());
  t.same(
    output.diagnostics.diagnostic.find((d) => d.name === 'disk-full'),
    {
      name: 'disk-full',
      output: ['commands/df.txt: /var: 99'],
      run_data: { h_importance: 'critical', match: true },
      results: {
        h_action: 'Free space now: remove old logs, traces and core files from the file system named below.',
        h_name: 'disk-full',
        h_header: 'A file system is full',
        h_summary: 'A file system is at 98 % or more: configuration saves, log writes and snapshot creation are failing or about to fail.',
        h_sols: ['https://support.example.com/kb/portolan-disk-space'],
        h_cve_ids: [],
      },
    },
  );
});

t.test('set=hit|miss|all lists hits, misses or everything; the counts are the same in each', async (t) => {
  const all = evaluateSnapshot(ruleSet, snapshotContent(TEST_MANIFEST, unhealthy()));
  const hit = selectDiagnostics(all, 'hit');
  const miss = evaluateSnapshot(ruleSet, snapshotContent(TEST_MANIFEST, unhealthy()), 'miss');
  t.equal(all.diagnostics.filter, 'all');
  t.equal(all.diagnostics.diagnostic.length, ruleSet.rules.length);
  t.same(
    all.diagnostics.diagnostic.map((d) => d.name),
    ruleSet.rules.map((r) => r.name),
    'rule-file order',
  );
  t.match(hit.diagnostics, { filter: 'hit', hit_count: 3, miss_count: ruleSet.rules.length - 3 });
  t.ok(hit.diagnostics.diagnostic.every((d) => d.run_data.match) && hit.diagnostics.diagnostic.length === 3);
  t.match(miss.diagnostics, { filter: 'miss', hit_count: 3, miss_count: ruleSet.rules.length - 3 });
  t.ok(miss.diagnostics.diagnostic.every((d) => !d.run_data.match && d.output.length === 0));
  t.equal(miss.diagnostics.diagnostic.length, ruleSet.rules.length - 3);
});

t.test('output lines are capped at 50 per diagnostic, the last saying how many more', async (t) => {
  const files = healthyFiles();
  const adc = JSON.parse(files['config/declarations.json']!);
  for (let i = 0; i < 60; i++) adc.Web_Prod.App_1[`empty_${i}`] = { class: 'Pool', members: [] };
  files['config/declarations.json'] = JSON.stringify(adc);
  const diagnostic = evaluateSnapshot(ruleSet, snapshotContent(TEST_MANIFEST, files), 'hit').diagnostics.diagnostic.find(
    (d) => d.name === 'pool-without-members',
  )!;
  t.equal(diagnostic.output.length, 51);
  t.equal(diagnostic.output.at(-1), '... and 10 more');
});

t.test('a declaration that is not JSON gives no configuration hits rather than an error', async (t) => {
  const files = { ...healthyFiles(), 'config/declarations.json': '{"class": "ADC", "T": {' };
  t.equal(evaluateSnapshot(ruleSet, snapshotContent(TEST_MANIFEST, files), 'hit').diagnostics.hit_count, 0);
});

t.test('reading a folder is bounded: each file cut at maxFileBytes, files past the budget listed as unread', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'portolan-read-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(
    join(root, 'snapshot.tgz'),
    snapshotArchive({ 'logs/a.log': ' err x\n'.repeat(200), 'logs/b.log': ' err y\n'.repeat(200), 'logs/c.log': ' err z\n' }),
  );
  t.ok((await extractSnapshot(join(root, 'snapshot.tgz'), join(root, 'files'))).ok);
  const only = parseRuleSet({
    version: '2026.11.1',
    rules: [
      {
        name: 'errors',
        importance: 'low',
        header: 'h',
        summary: 's',
        action: 'a',
        solutions: ['https://support.example.com/x'],
        match: { pattern: { files: 'logs/*.log', regex: '\\serr\\s', atLeast: 1 } },
      },
    ],
  });
  if (!only.ok) return t.fail(only.message);
  const read = await readSnapshotFolder(join(root, 'files'), only.ruleSet.reads, {
    maxFileBytes: 700,
    maxTotalBytes: 1400,
    maxManifestBytes: 4096,
  });
  if (!read.ok) return t.fail(read.message);
  t.equal(read.content.text.get('logs/a.log')!.length, 700);
  t.equal(read.content.text.get('logs/b.log')!.length, 700);
  t.same(read.content.unread, ['logs/c.log']);
  t.same(evaluateSnapshot(only.ruleSet, read.content).diagnostics.diagnostic[0]!.output, [
    'logs/a.log: 100 matching lines, first at line 1: err x',
    'logs/b.log: 100 matching lines, first at line 1: err y',
  ]);
});

t.test('reading a folder without a valid manifest fails with the manifest message', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'portolan-read-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  t.match(await readSnapshotFolder(root, ruleSet.reads), { ok: false, message: 'manifest.json is missing at the root of the archive' });
  await writeFile(join(root, 'manifest.json'), JSON.stringify({ ...TEST_MANIFEST, version: 'x' }));
  t.match(await readSnapshotFolder(root, ruleSet.reads), { ok: false, message: /manifest\.json: version must be/ });
});
