// Processing on the job port: upload -> COMPLETE with diagnostics, or ERROR with the engine's message;
// a rule set of another version evaluates processed snapshots again; deletes leave no files behind.
import { access, copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Database } from '../../stores/database.ts';
import { DEFAULT_RULES_PATH, loadRuleSetFile } from './engine/index.ts';
import { hostileArchive } from './engine/test-archive.ts';
import { contentsOf, createSnapshotProcessor } from './processing.ts';
import { snapshotStore } from './snapshot-store.ts';
import { healthyArchive, jobsSettled, processed, testService, testStore, tree, until, uploaded } from './test-snapshots-helpers.ts';

const NEARLY_FULL_DISK = 'Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/sda1  20511312 19100000 1411312 93% /\n';

t.test('an upload is processed to COMPLETE: device fields, diagnostics, files and commands', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const id = await uploaded(service, 'alice', healthyArchive({ 'commands/df.txt': NEARLY_FULL_DISK }));
  const record = await processed(service, 'alice', id);
  t.match(record, {
    status: 'COMPLETE',
    messages: [],
    hostname: 'device-1.example.net',
    chassisSerial: 'PTL-0001-4242',
    platform: 'portolan-reference',
    version: '17.1.0',
    generationDate: '2026-11-02T09:30:00Z',
    rulesVersion: '2026.12.2',
  });

  const output = await service.diagnostics('alice', id);
  t.equal(output?.diagnostics.filter, 'all');
  t.equal(output?.version, '2026.12.2');
  t.same(output?.system_information, { hostname: 'device-1.example.net', chassis_serial: 'PTL-0001-4242', platform: 'portolan-reference' });
  const hits = output?.diagnostics.diagnostic.filter((d) => d.run_data.match);
  t.same(
    hits?.map((d) => d.name),
    ['disk-usage-high'],
  );
  t.same(hits?.[0]?.output, ['commands/df.txt: /: 93']);
  t.equal(output?.diagnostics.hit_count, 1);
  t.equal(output!.diagnostics.miss_count + output!.diagnostics.hit_count, output!.diagnostics.diagnostic.length);

  const files = await service.files('alice', id);
  t.ok(files?.some((f) => f.value === 'manifest.json'));
  t.ok(
    files?.every((f) => /^[0-9a-f]{32}$/.test(f.id)),
    'file ids are 32 hex digits',
  );
  const df = files!.find((f) => f.value === 'commands/df.txt')!;
  const file = await service.file('alice', id, df.id);
  t.same(file, {
    id: df.id,
    value: 'commands/df.txt',
    size: NEARLY_FULL_DISK.length,
    truncated: false,
    content: Buffer.from(NEARLY_FULL_DISK).toString('base64'),
  });

  const commands = await service.commands('alice', id);
  t.same(
    commands?.map((c) => c.value),
    ['df', 'license', 'memory', 'ntp', 'uptime'],
  );
  const command = await service.command('alice', id, commands!.find((c) => c.value === 'df')!.id);
  t.equal(Buffer.from(command!.output, 'base64').toString(), NEARLY_FULL_DISK);
  t.equal(await service.file('alice', id, 'ffffffffffffffffffffffffffffffff'), undefined, 'an unknown file id');
  t.equal(await service.command('alice', id, 'ffffffffffff'), undefined, 'an unknown command id');

  await jobsSettled(store);
  t.same(
    await tree(join(store.dataDir, id)),
    ['files', ...(await tree(join(store.dataDir, id, 'files'))).map((p) => `files/${p}`)].sort(),
    'the archive is removed, the unpacked files stay',
  );
});

t.test('a file is served with at most 4 MiB of its content, and its whole size', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const big = Buffer.alloc(5 * 1024 * 1024, 'a');
  const id = await uploaded(service, 'alice', healthyArchive({ 'logs/big.log': big }));
  await processed(service, 'alice', id);
  const entry = (await service.files('alice', id))!.find((f) => f.value === 'logs/big.log')!;
  const file = await service.file('alice', id, entry.id);
  t.equal(file?.size, big.length);
  t.equal(file?.truncated, true);
  t.equal(Buffer.from(file!.content, 'base64').length, 4 * 1024 * 1024);
});

t.test('a file that is not a snapshot archive ends ERROR with the engine message, and its folder is removed', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const id = await uploaded(service, 'alice', Buffer.from('these are my notes, not a snapshot\n'), 'notes.txt');
  const record = await processed(service, 'alice', id);
  t.match(record, {
    status: 'ERROR',
    messages: ['the archive is not gzip data (a snapshot is a gzip-compressed tar archive)'],
    fileName: 'notes.txt',
    hostname: '',
  });
  t.equal(record.rulesVersion, undefined);
  t.equal(await service.diagnostics('alice', id), undefined);
  t.equal(await service.files('alice', id), undefined);
  t.equal(await service.commands('alice', id), undefined);
  await jobsSettled(store);
  t.same(await tree(store.dataDir), []);
});

t.test('hostile archives end ERROR with the reason, and nothing is written outside (or left in) the data dir', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const cases = [
    { archive: hostileArchive([{ path: '../escaped.txt', body: 'x' }]), message: /has a '\.\.' component/ },
    { archive: hostileArchive([{ path: 'logs/pipe', type: 'FIFO' }]), message: /is a FIFO/ },
    { archive: hostileArchive([{ path: '/tmp/portolan-absolute-escape.txt', body: 'x' }]), message: /absolute path/ },
  ];
  for (const { archive, message } of cases) {
    const id = await uploaded(service, 'alice', archive);
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'ERROR');
    t.match(record.messages[0], message);
    t.notMatch(record.messages.join(' '), /\n\s+at /, 'no stack trace');
  }
  await jobsSettled(store);
  t.same(
    (await tree(store.root)).filter((p) => !p.startsWith('portolan.db')),
    ['snapshots'],
    'only the (empty) data dir beside the store',
  );
  t.same(await tree(store.dataDir), []);
  await t.rejects(access('/tmp/portolan-absolute-escape.txt'), 'nothing written at the absolute path');
});

t.test('a snapshot deleted before its job runs: the job is gone with it, and nothing is left', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const id = await uploaded(service, 'alice', healthyArchive());
  const [job] = await store.db.query<{ id: string }>('SELECT id FROM jobs');
  t.equal(await service.remove('alice', id), 'deleted');
  t.same(await store.db.query('SELECT id FROM jobs WHERE id = $1', [job!.id]), [], 'the waiting job is deleted');
  t.same(await tree(store.dataDir), []);
  t.equal(await service.remove('alice', id), 'not-found');
});

t.test('a snapshot deleted while it was processed: the job notices and removes the files it unpacked', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const id = await uploaded(service, 'alice', healthyArchive());
  // The row is deleted (by another process, whose folder removal ran before this job unpacked) just before the outcome is stored.
  const deletingFirst = (handle: Database): Database => ({
    ...handle,
    execute: async (sql, params) => {
      if (sql.includes("SET status = 'COMPLETE'")) await handle.execute('DELETE FROM snapshots WHERE id = $1', [id]);
      return handle.execute(sql, params);
    },
  });
  // The outcome is written in a transaction (with the quota check): the delete comes first there.
  const db: Database = { ...store.db, transaction: (work, options) => store.db.transaction((tx) => work(deletingFirst(tx)), options) };
  const loaded = await loadRuleSetFile();
  if (!loaded.ok) throw new Error(loaded.message);
  const processor = createSnapshotProcessor({
    db,
    dataDir: store.dataDir,
    logger: store.logs.logger,
    timers: store.clock,
    ruleSet: () => loaded.ruleSet,
  });
  await processor.run(id, new AbortController().signal);
  t.same(await tree(store.dataDir), [], 'nothing left');
  t.match(store.logs.text(), /snapshot deleted while it was processed/);

  // And a job whose snapshot is already gone ends quietly, removing a leftover folder.
  await processor.run('4242', new AbortController().signal);
  t.pass('no error');
});

t.test('a job given up ends the snapshot ERROR with the reason and removes its folder', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { start: false });
  const id = await uploaded(service, 'alice', healthyArchive());
  const processor = createSnapshotProcessor({
    db: store.db,
    dataDir: store.dataDir,
    logger: store.logs.logger,
    timers: store.clock,
    ruleSet: () => {
      throw new Error('not needed');
    },
  });
  await processor.giveUp(id, 'given up after 3 attempts (at most 3): the store was unavailable');
  await processor.giveUp(id, 'called again: changes nothing');
  t.match(await service.get('alice', id), {
    status: 'ERROR',
    messages: ['The snapshot could not be processed: given up after 3 attempts (at most 3): the store was unavailable'],
  });
  t.same(await tree(store.dataDir), []);
});

t.test('a rule set of another version evaluates processed snapshots again, from their unpacked folder', async (t) => {
  const store = await testStore(t);
  const first = await testService(store);
  const id = await uploaded(first, 'alice', healthyArchive({ 'commands/df.txt': NEARLY_FULL_DISK }));
  const failed = await uploaded(first, 'alice', Buffer.from('not a snapshot'));
  await processed(first, 'alice', id);
  await processed(first, 'alice', failed);
  await first.stop();
  const before = await first.diagnostics('alice', id);
  t.equal(before?.version, '2026.12.2');

  // The next week's rule set: a new version in which the disk threshold became critical.
  const rules = JSON.parse(await readFile(DEFAULT_RULES_PATH, 'utf8')) as {
    version: string;
    rules: { name: string; importance: string }[];
  };
  rules.version = '2026.11.2';
  rules.rules.find((r) => r.name === 'disk-usage-high')!.importance = 'critical';
  const rulesPath = join(store.root, 'rules.json');
  await writeFile(rulesPath, JSON.stringify(rules));

  const second = await testService(store, { rulesPath });
  const record = await until(async () => {
    const r = await second.get('alice', id);
    return r?.rulesVersion === '2026.11.2' ? r : undefined;
  }, 'the snapshot is evaluated with the new rule set');
  t.equal(record.status, 'COMPLETE', 'it stays COMPLETE (and answers 200) while and after it is evaluated again');
  const after = await second.diagnostics('alice', id);
  t.equal(after?.version, '2026.11.2');
  t.equal(after?.diagnostics.diagnostic.find((d) => d.name === 'disk-usage-high')?.run_data.h_importance, 'critical');
  t.equal((await second.diagnostics('alice', '0'))?.version, '2026.11.2', 'the sample is evaluated with it too');
  t.match(await second.get('alice', failed), { status: 'ERROR', rulesVersion: undefined }, 'a failed snapshot stays failed');

  // The same rule set again: nothing is queued.
  await second.stop();
  t.same(await snapshotStore.staleIds(store.db, '2026.11.2'), []);
});

t.test('an invalid rule set refuses to start', async (t) => {
  const store = await testStore(t);
  const rulesPath = join(store.root, 'rules.json');
  await copyFile(DEFAULT_RULES_PATH, rulesPath);
  await writeFile(rulesPath, (await readFile(rulesPath, 'utf8')).replace('"importance": "high"', '"importance": "severe"'));
  await t.rejects(testService(store, { rulesPath }), /importance: must be one of low, medium, high, critical/);
});

t.test('the content listing: every file by a hash of its path, commands by their file name', async (t) => {
  const contents = contentsOf(['manifest.json', 'commands/df.txt', 'commands/nested/x.txt', 'commands/notes.md', 'logs/a.log']);
  t.same(
    contents.files.map((f) => f.value),
    ['commands/df.txt', 'commands/nested/x.txt', 'commands/notes.md', 'logs/a.log', 'manifest.json'],
  );
  t.same(
    contents.commands.map((c) => c.value),
    ['df'],
  );
  t.match(contents.commands[0]!.id, /^[0-9a-f]{12}$/);
  t.equal(new Set(contents.files.map((f) => f.id)).size, 5);
});
