// Hostile device archives (a UCS or qkview layout, no manifest) against snapshot processing (interface C):
// the same refusals as Portolan's own layout (bombs, paths that leave the folder, links), and configuration
// text made to exhaust a reader (huge files, braces nested millions deep, quotes that never end, millions of
// objects): each is read in one bounded pass, and what was left out is said in the findings.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { DiagnosticOutput } from '../../generated/snapshots/types.gen.ts';
import { inflatedBudgetLimits } from '../interfaces/snapshots/engine/index.ts';
import { rawTar, type RawEntry } from '../interfaces/snapshots/engine/test-archive.ts';
import { jobsSettled, processed, testService, testStore, tree, uploaded } from '../interfaces/snapshots/test-snapshots-helpers.ts';

const MiB = 1024 * 1024;
const base: RawEntry = { path: 'config/bigip_base.conf', body: 'sys global-settings {\n    hostname lb1.example.net\n}\n' };
const version: RawEntry = { path: 'VERSION', body: 'Product: BIG-IP\nVersion: 16.1.4\n' };
const archive = (...entries: RawEntry[]) => gzipSync(rawTar([version, base, ...entries]));
const lines = (output: DiagnosticOutput, name: string) => output.diagnostics.diagnostic.find((d) => d.name === name)?.output ?? [];

t.test('C-device-archive-bomb: a device archive that unpacks past the byte budget ends ERROR with the reason', async (t) => {
  const store = await testStore(t);
  const service = await testService(store, { extractLimits: inflatedBudgetLimits(8 * MiB) });
  const record = await processed(
    service,
    'alice',
    await uploaded(service, 'alice', archive({ path: 'var/log/ltm', body: Buffer.alloc(9 * MiB) })),
  );
  t.equal(record.status, 'ERROR');
  t.match(record.messages[0], /the archive unpacks to more than 8388608 bytes/);
  await jobsSettled(store); // the record says ERROR before its folder is removed
  t.same(await tree(store.dataDir), [], 'nothing of it is kept');
});

t.test('C-device-archive-traversal: names that leave the folder end ERROR; nothing is written outside it', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  for (const path of [
    '../../config/bigip.conf',
    '/config/bigip.conf',
    'config/../../../etc/cron.d/x',
    'C:/config/bigip.conf',
    'config\\..\\x',
  ]) {
    const record = await processed(service, 'alice', await uploaded(service, 'alice', archive({ path, body: 'ltm pool /Common/p { }\n' })));
    t.equal(record.status, 'ERROR', path);
    t.match(record.messages[0], /has a '\.\.' component|has an absolute path|drive letter|backslash/);
  }
  t.same(await tree(store.root).then((all) => all.filter((p) => /cron|etc|x$/.test(p))), []);
});

t.test('C-device-archive-links: links are left out, never followed: a configuration file given as one is not read', async (t) => {
  const store = await testStore(t);
  const service = await testService(store);
  const pool: RawEntry = { path: 'config/bigip.conf', body: 'ltm pool /Common/kept { }\n' };
  const cases: { entries: RawEntry[]; left: string }[] = [
    { entries: [{ path: 'config/partitions', type: 'SymbolicLink', linkpath: '../../../../..' }, pool], left: 'config/partitions' },
    { entries: [{ path: 'config/ssl/ab12cd34.0', type: 'SymbolicLink', linkpath: '/etc/passwd' }, pool], left: 'config/ssl/ab12cd34.0' },
    { entries: [{ path: 'config/bigip.conf', type: 'Link', linkpath: 'VERSION' }], left: 'config/bigip.conf' },
  ];
  for (const { entries, left } of cases) {
    const id = await uploaded(service, 'alice', archive(...entries));
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'COMPLETE', left);
    const output = (await service.diagnostics('alice', id))!;
    t.same(lines(output, 'snapshot-read-partly'), [`1 link was left out of the archive, never followed: ${JSON.stringify(left)}`]);
    t.notMatch(JSON.stringify(output), /root:x:0:0/, 'nothing of the link target is read');
  }
  const all = await tree(store.dataDir);
  t.same(
    all.filter((p) => /partitions|ab12cd34/.test(p)),
    [],
    'no link is on disk',
  );
});

t.test(
  'C-device-archive-huge-config: a configuration file past the read limit, with millions of objects: its head is read, the rest said',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store);
    // 1.5 million one-line pools (about 40 MiB): past the 32 MiB read of a file and the 100 000 objects kept of one.
    const pools = Buffer.from(Array.from({ length: 1_500_000 }, (_, i) => `ltm pool /Common/p${i} { }\n`).join(''));
    const id = await uploaded(service, 'alice', archive({ path: 'config/bigip.conf', body: pools }));
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'COMPLETE');
    const output = (await service.diagnostics('alice', id))!;
    t.match(lines(output, 'snapshot-read-partly'), [
      /^config\/bigip\.conf is \d+ bytes: only its first 33554432 bytes were read$/,
      /^config\/bigip\.conf: more than 100000 objects: ltm pool \/Common\/p100000 and later ones were left out$/,
    ]);
    t.equal(lines(output, 'pool-without-members').length, 51, 'findings stay capped at 50 lines and a count');
  },
);

t.test(
  'C-device-archive-deep-braces: braces nested millions deep, in an object or a script, stop that file in one pass; the rest is read',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store);
    const id = await uploaded(
      service,
      'alice',
      archive(
        { path: 'config/bigip.conf', body: `ltm pool /Common/kept { }\nltm pool /Common/deep ${'{'.repeat(4 * MiB)}` },
        { path: 'config/bigip_script.conf', body: `ltm rule /Common/r ${'{'.repeat(4 * MiB)}` },
        {
          path: 'config/partitions/T/bigip.conf',
          body: `ltm pool /T/nested {\n${'{ '.repeat(1000)}${'} '.repeat(1000)}\n}\nltm pool /T/after { }\n`,
        },
      ),
    );
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'COMPLETE');
    const output = (await service.diagnostics('alice', id))!;
    t.same(lines(output, 'snapshot-read-partly'), [
      'config/bigip.conf: line 2: ltm pool /Common/deep does not end (unbalanced braces or quotes); the rest of the file was not read',
      'config/bigip_script.conf: line 1: ltm rule /Common/r does not end (unbalanced braces or quotes); the rest of the file was not read',
      'config/partitions/T/bigip.conf: line 1: ltm pool /T/nested is nested more than 32 levels deep; it was left out',
    ]);
    t.same(lines(output, 'pool-without-members'), ['/Common/kept (memberCount 0)', '/T/after (memberCount 0)']);
  },
);

t.test(
  'C-device-archive-pathological-tmsh: quotes that never end, a million-word line, control characters in names: bounded, said escaped',
  async (t) => {
    const store = await testStore(t);
    const service = await testService(store);
    const id = await uploaded(
      service,
      'alice',
      archive(
        { path: 'config/bigip.conf', body: `ltm pool /Common/a { }\n${'ltm pool /Common/x { description "never ends\n'.repeat(100_000)}` },
        { path: 'config/partitions/P/bigip.conf', body: `ltm pool /P/w {\n    ${'w '.repeat(MiB)}\n}\n` },
        { path: 'config/partitions/Q/bigip.conf', body: 'ltm pool "/Q/\u001b[2J\u0007x" {\n    members {\n' },
      ),
    );
    const record = await processed(service, 'alice', id);
    t.equal(record.status, 'COMPLETE');
    const notes = lines((await service.diagnostics('alice', id))!, 'snapshot-read-partly');
    t.same(notes, [
      'config/bigip.conf: line 2: ltm pool /Common/x does not end (unbalanced braces or quotes); the rest of the file was not read',
      'config/partitions/P/bigip.conf: line 1: ltm pool /P/w has more than 200000 words and entries; it was left out',
      'config/partitions/Q/bigip.conf: line 1: ltm pool /Q/\\u001b[2J\\u0007x does not end (unbalanced braces or quotes); the rest of the file was not read',
    ]);
    t.notMatch(notes.join(' '), /[\u0000-\u001f]/, 'no control character reaches a finding');
  },
);
