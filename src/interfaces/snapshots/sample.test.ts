// The shared sample snapshot 0: what it finds, that it is a valid snapshot, and that it is read-only.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { extractSnapshot, loadRuleSetFile } from './engine/index.ts';
import { packFolder } from './engine/test-archive.ts';
import { createFakeClock } from '../../lib/clock.ts';
import { loadSample, SAMPLE_DIR } from './sample.ts';
import { snapshotRepresentation } from './snapshot-wire.ts';
import { healthyArchive, processed, testService, testStore, uploaded } from './test-snapshots-helpers.ts';

const EXPECTED_HITS = {
  critical: ['core-files-present'],
  high: ['pool-without-members', 'monitor-interval-not-below-timeout', 'disk-usage-high', 'license-expiring'],
  medium: ['http-service-without-tls', 'script-deprecated-commands', 'db-access-log-verbose'],
  low: ['pool-single-member', 'uptime-over-a-year'],
};

t.test('the sample hits rules of every importance, and misses the rest', async (t) => {
  const loaded = await loadRuleSetFile();
  if (!loaded.ok) throw new Error(loaded.message);
  const { output, record } = await loadSample(loaded.ruleSet);
  const hits = output.diagnostics.diagnostic.filter((d) => d.run_data.match);
  const byImportance = (level: string) =>
    hits
      .filter((d) => d.run_data.h_importance === level)
      .map((d) => d.name)
      .sort();
  for (const [level, names] of Object.entries(EXPECTED_HITS)) t.same(byImportance(level), [...names].sort(), `${level} hits`);
  t.equal(output.diagnostics.hit_count, 10);
  t.equal(output.diagnostics.miss_count, loaded.ruleSet.rules.length - 10);
  t.ok(
    hits.every((d) => d.output.length > 0),
    'every hit says where',
  );
  t.match(record, {
    id: '0',
    account: '*',
    hostname: 'sample.example.com',
    chassisSerial: 'sample0000s',
    status: 'COMPLETE',
    description: 'Sample snapshot (shared, read-only)',
    uploadedBy: 'Portolan',
    uploadedAtMs: Date.parse('2025-01-06T00:00:00Z'),
  });
});

t.test('the sample is a valid snapshot: packed as an archive, the engine unpacks it', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'portolan-sample-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await packFolder(SAMPLE_DIR, join(root, 'sample.tgz'));
  const extracted = await extractSnapshot(join(root, 'sample.tgz'), join(root, 'files'));
  t.ok(extracted.ok, extracted.ok ? 'unpacked' : extracted.message);
});

t.test('every account lists the sample first and reads it; it cannot be changed or deleted', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const id = await uploaded(service, 'alice', healthyArchive());
  await processed(service, 'alice', id);
  t.same(await service.list('alice'), ['0', id]);
  t.same(await service.list('bob'), ['0']);
  for (const account of ['alice', 'bob']) {
    t.match(await service.get(account, '0'), { id: '0', status: 'COMPLETE', rulesVersion: '2026.12.2' });
    t.ok((await service.diagnostics(account, '0'))!.diagnostics.hit_count > 0);
  }
  const files = await service.files('bob', '0');
  const declarations = files!.find((f) => f.value === 'config/declarations.json')!;
  const file = await service.file('bob', '0', declarations.id);
  t.match(Buffer.from(file!.content, 'base64').toString(), /"reports_pool"/);
  const commands = await service.commands('bob', '0');
  t.same(
    commands?.map((c) => c.value),
    ['df', 'license', 'memory', 'ntp', 'uptime', 'version'],
  );
  const uptime = await service.command('bob', '0', commands!.find((c) => c.value === 'uptime')!.id);
  t.match(Buffer.from(uptime!.output, 'base64').toString(), /up 412 days/);

  t.equal(await service.update('alice', '0', { description: 'mine now' }), 'read-only');
  t.equal(await service.remove('alice', '0'), 'read-only');
  t.same(await service.removeAll('alice'), [id], 'delete-all deletes the account own snapshots');
  t.same(await service.list('alice'), ['0'], 'and the sample stays');
  t.equal((await service.get('alice', '0'))?.description, 'Sample snapshot (shared, read-only)');
});

t.test('a sample folder that is not a snapshot is refused', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'portolan-sample-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'manifest.json'), '{"format":"other/1"}');
  const loaded = await loadRuleSetFile();
  if (!loaded.ok) throw new Error(loaded.message);
  await t.rejects(loadSample(loaded.ruleSet, root), /The sample snapshot in .* is not valid: manifest.json: format must be/);
});

t.test("the sample's expiration date is always ahead of the clock, and the same all day", async (t) => {
  const store = await testStore(t);
  // Far past the sample's own date (2025) and past any year a fixed date would have been picked for.
  const clock = createFakeClock(Date.parse('2140-03-09T17:45:12Z'));
  const service = await testService(store, { clock });
  const expiration = async (account: string) => snapshotRepresentation('http://localhost:8300', (await service.get(account, '0'))!);
  const record = await expiration('alice');
  t.equal(record.expiration_date, '2141-03-10T00:00:00.000Z', 'the end of the day a year from now');
  t.ok(Date.parse(record.expiration_date) > clock.nowMs(), 'never in the past');
  t.equal(record.upload.date, '2025-01-06T00:00:00.000Z', 'its upload date is still its manifest date');

  clock.advance(Date.parse('2140-03-09T23:59:59.999Z') - clock.nowMs());
  t.equal((await expiration('bob')).expiration_date, '2141-03-10T00:00:00.000Z', 'the same until midnight');
  clock.advance(1);
  t.equal((await expiration('bob')).expiration_date, '2141-03-11T00:00:00.000Z', 'a day later the next day');
});
