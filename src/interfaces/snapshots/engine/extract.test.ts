import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { TapTest } from '../../../lib/tap-test.ts';
import { extractSnapshot } from './extract.ts';
import { extractLimits, type ExtractLimits } from './limits.ts';
import { hostileArchive, packFolder, rawTar, readFolder, snapshotArchive, TEST_MANIFEST, type RawEntry } from './test-archive.ts';

const HEALTHY = new URL('./fixtures/healthy-snapshot/', import.meta.url).pathname;
const manifestEntry: RawEntry = { path: 'manifest.json', body: JSON.stringify(TEST_MANIFEST) };
const small = extractLimits({ maxEntries: 20, maxUnpackedBytes: 64 * 1024, maxEntryBytes: 16 * 1024, maxDepth: 6 });

/** A private temp tree per test: `root/archive.tgz` and `root/work/dest`; everything under root is checked afterwards. */
async function workspace(t: TapTest, archive: Buffer) {
  const root = await mkdtemp(join(tmpdir(), 'portolan-extract-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'work'));
  await writeFile(join(root, 'archive.tgz'), archive);
  return { root, archive: join(root, 'archive.tgz'), dest: join(root, 'work', 'dest') };
}

const tree = async (dir: string) => (await readdir(dir, { recursive: true })).sort();

type Hostile = { name: string; archive: () => Buffer; message: RegExp; limits?: ExtractLimits };

/** A pax extended header body of `n` bytes that says nothing (one `comment` record). */
const paxComment = (n: number) => `${n} comment=${'c'.repeat(n - `${n} comment=`.length - 1)}\n`;
const goodTar = () => rawTar([manifestEntry, { path: 'logs/a.log', body: 'hello\n' }]);

const HOSTILE: Hostile[] = [
  { name: 'a plain tar, not gzip', archive: goodTar, message: /not gzip data/ },
  { name: 'a gzip stream cut short', archive: () => gzipSync(goodTar()).subarray(0, 40), message: /not valid gzip data/ },
  { name: 'a gzip stream with a corrupted body', archive: () => corrupt(gzipSync(goodTar())), message: /not valid gzip data/ },
  {
    name: 'gzip of random bytes, not a tar',
    archive: () => gzipSync(Buffer.from('this is not a tar archive at all\n'.repeat(40))),
    message: /not a valid tar archive/,
  },
  {
    name: 'a tar cut in the middle of an entry',
    archive: () => gzipSync(rawTar([manifestEntry, { path: 'logs/a.log', body: 'x'.repeat(2000) }], { end: false }).subarray(0, 1536)),
    message: /not a valid tar archive \(Truncated input/,
  },
  { name: 'a gzip inside the gzip', archive: () => gzipSync(gzipSync(goodTar())), message: /compressed twice/ },
  {
    name: 'too many entries',
    archive: () => hostileArchive(Array.from({ length: 25 }, (_, i) => ({ path: `logs/${i}.log`, body: '.' }))),
    message: /more than 20 entries/,
    limits: small,
  },
  {
    name: 'one entry too large (declared size)',
    archive: () => hostileArchive([{ path: 'logs/huge.log', body: 'x', size: 20 * 1024 }]),
    message: /"logs\/huge.log" is 20480 bytes unpacked \(at most 16384 per file\)/,
    limits: small,
  },
  {
    name: 'too large unpacked in total',
    archive: () => hostileArchive(Array.from({ length: 5 }, (_, i) => ({ path: `logs/${i}.log`, body: 'y'.repeat(15 * 1024) }))),
    message: /unpacks to more than 65536 bytes/,
    limits: small,
  },
  {
    name: 'an extended header over 1 MiB (tar would skip its declared size unjudged)',
    archive: () => hostileArchive([{ path: 'PaxHeader', type: 'ExtendedHeader', body: 'x', size: 8 * 1024 ** 3 }]),
    message: /an extended header \(ExtendedHeader\) of 8589934592 bytes \(at most 1 MiB\)/,
  },
  {
    name: 'extended headers adding up past the inflated-bytes bound',
    archive: () =>
      hostileArchive(
        Array.from({ length: 3 }, () => ({ path: 'PaxHeader', type: 'ExtendedHeader' as const, body: paxComment(900 * 1024) })),
      ),
    message: /inflates to more than 1196032 bytes/,
    limits: small,
  },
  {
    name: 'a path nested too deep',
    archive: () => hostileArchive([{ path: 'a/b/c/d/e/f/g.txt', body: 'deep' }]),
    message: /nested 7 levels deep \(at most 6\)/,
    limits: small,
  },
  { name: 'a character device', archive: () => hostileArchive([{ path: 'logs/null', type: 'CharacterDevice' }]), message: /is a device/ },
  { name: 'a FIFO', archive: () => hostileArchive([{ path: 'logs/pipe', type: 'FIFO' }]), message: /is a FIFO/ },
  {
    name: 'an absolute path',
    archive: () => hostileArchive([{ path: '/tmp/portolan-absolute-escape.txt', body: 'x' }]),
    message: /has an absolute path/,
  },
  {
    name: "a '..' component",
    archive: () => hostileArchive([{ path: '../escaped.txt', body: 'x' }]),
    message: /"\.\.\/escaped.txt" has a '\.\.' component/,
  },
  {
    name: "a '..' that stays inside after normalisation",
    archive: () => hostileArchive([{ path: 'logs/../logs/a.log', body: 'x' }]),
    message: /has a '\.\.' component/,
  },
  {
    name: "a '..' given in a pax header",
    archive: () => hostileArchive([{ path: '../../pax-escaped.txt', body: 'x', pax: true }]),
    message: /"\.\.\/\.\.\/pax-escaped.txt" has a '\.\.' component/,
  },
  {
    name: 'backslashes (a Windows path)',
    archive: () => hostileArchive([{ path: '..\\..\\escaped.txt', body: 'x' }]),
    message: /has a backslash/,
  },
  { name: 'a Windows drive letter', archive: () => hostileArchive([{ path: 'C:escaped.txt', body: 'x' }]), message: /drive letter/ },
  {
    name: 'control characters in a name',
    archive: () => hostileArchive([{ path: 'logs/a\u001b[2J.log', body: 'x' }]),
    message: /"logs\/a\\u001b\[2J.log" has control characters/,
  },
  {
    name: 'the same entry twice',
    archive: () =>
      hostileArchive([
        { path: 'logs/a.log', body: 'first' },
        { path: 'logs/a.log', body: 'second' },
      ]),
    message: /"logs\/a.log" appears twice/,
  },
  {
    name: 'the same entry twice, spelt differently',
    archive: () =>
      hostileArchive([
        { path: 'logs/a.log', body: 'first' },
        { path: './LOGS//A.log', body: 'second' },
      ]),
    message: /appears twice/,
  },
  {
    name: 'a file that is also used as a directory',
    archive: () =>
      hostileArchive([
        { path: 'config', body: 'x' },
        { path: 'config/a.json', body: '{}' },
      ]),
    message: /inside "config", which is a file/,
  },
  { name: 'no manifest', archive: () => gzipSync(rawTar([{ path: 'logs/a.log', body: 'x' }])), message: /manifest.json is missing/ },
  {
    name: 'a manifest that is not JSON',
    archive: () => gzipSync(rawTar([{ path: 'manifest.json', body: '{format:' }])),
    message: /manifest.json is not valid JSON/,
  },
  {
    name: 'a manifest of another format',
    archive: () => gzipSync(rawTar([{ path: 'manifest.json', body: JSON.stringify({ ...TEST_MANIFEST, format: 'other/2' }) }])),
    message: /format must be "portolan-snapshot\/1"/,
  },
  {
    name: 'a manifest that is a directory',
    archive: () => gzipSync(rawTar([{ path: 'manifest.json/', type: 'Directory' }])),
    message: /manifest.json is a directory/,
  },
];

function corrupt(gz: Buffer): Buffer {
  const copy = Buffer.from(gz);
  for (let i = 12; i < copy.length - 8; i += 3) copy[i] = copy[i]! ^ 0x5a;
  return copy;
}

t.test('each hostile archive fails with a message saying why, and nothing is left outside (or inside) the destination', async (t) => {
  t.ok(HOSTILE.length >= 10);
  for (const hostile of HOSTILE) {
    await t.test(hostile.name, async (t) => {
      const { root, archive, dest } = await workspace(t, hostile.archive());
      const result = await extractSnapshot(archive, dest, hostile.limits);
      t.equal(result.ok, false, 'refused');
      if (!result.ok) t.match(result.message, hostile.message);
      t.same(await tree(root), ['archive.tgz', 'work'], 'the destination it created is gone and nothing was written beside it');
      await t.rejects(readFile('/tmp/portolan-absolute-escape.txt'), 'nothing written at an absolute path');
    });
  }
});

t.test('links are left out, never written nor followed, and counted: a real device archive carries some', async (t) => {
  const { root, archive, dest } = await workspace(
    t,
    gzipSync(
      rawTar([
        manifestEntry,
        { path: 'config/evil', type: 'SymbolicLink', linkpath: '../../..' },
        { path: 'config/evil/escaped.txt', body: 'x' },
        { path: 'logs/passwd', type: 'Link', linkpath: '/etc/passwd' },
        ...Array.from({ length: 6 }, (_, i): RawEntry => ({ path: `config/ssl/h${i}.0`, type: 'SymbolicLink', linkpath: 'default.crt' })),
      ]),
    ),
  );
  const result = await extractSnapshot(archive, dest);
  t.ok(result.ok, result.ok ? 'extracted' : result.message);
  if (!result.ok) return;
  t.same(result.skippedLinks, {
    count: 8,
    names: ['config/evil', 'logs/passwd', 'config/ssl/h0.0', 'config/ssl/h1.0', 'config/ssl/h2.0'],
  });
  t.same(result.files, ['manifest.json', 'config/evil/escaped.txt'], 'the file under the left-out link is written in a real folder');
  t.same(await tree(root), [
    'archive.tgz',
    'work',
    'work/dest',
    'work/dest/config',
    'work/dest/config/evil',
    'work/dest/config/evil/escaped.txt',
    'work/dest/manifest.json',
  ]);
  t.equal((await stat(join(dest, 'config/evil'))).isDirectory(), true);
});

t.test('a failed extraction into an existing empty folder leaves the folder, empty', async (t) => {
  const { root, archive, dest } = await workspace(
    t,
    hostileArchive([
      { path: 'logs/a.log', body: 'x'.repeat(100) },
      { path: '../escaped.txt', body: 'x' },
    ]),
  );
  await mkdir(dest);
  const result = await extractSnapshot(archive, dest);
  t.match(result, { ok: false, message: /'\.\.' component/ });
  t.same(await tree(root), ['archive.tgz', 'work', 'work/dest']);
});

t.test('a destination that is not an empty folder is refused and left alone', async (t) => {
  const { archive, dest } = await workspace(t, snapshotArchive({ 'logs/a.log': 'x' }));
  await mkdir(dest);
  await writeFile(join(dest, 'keep.txt'), 'mine');
  t.match(await extractSnapshot(archive, dest), { ok: false, message: /not an empty directory/ });
  t.equal(await readFile(join(dest, 'keep.txt'), 'utf8'), 'mine');
});

t.test('a destination whose parent folder is missing is a failure, and nothing is created', async (t) => {
  const { root, archive } = await workspace(t, snapshotArchive({}));
  t.match(await extractSnapshot(archive, join(root, 'no', 'dest')), { ok: false, message: /cannot be created \(ENOENT\)/ });
  t.same(await tree(root), ['archive.tgz', 'work']);
});

t.test('a missing archive file is a failure, not a crash', async (t) => {
  const { root, dest } = await workspace(t, Buffer.alloc(0));
  t.match(await extractSnapshot(join(root, 'nope.tgz'), dest), { ok: false, message: /could not be unpacked \(ENOENT\)/ });
  t.same(await tree(root), ['archive.tgz', 'work']);
});

t.test('a good archive made by the tar packer unpacks whole: the manifest, every file, the byte count', async (t) => {
  const { root, dest } = await workspace(t, Buffer.alloc(0));
  const archive = join(root, 'packed.tgz');
  await packFolder(HEALTHY, archive);
  const result = await extractSnapshot(archive, dest);
  t.ok(result.ok, result.ok ? 'extracted' : result.message);
  if (!result.ok) return;
  const original = await readFolder(HEALTHY);
  t.same(await readFolder(dest), original, 'the same files with the same content');
  t.same([...result.files].sort(), Object.keys(original).sort());
  t.equal(
    result.unpackedBytes,
    Object.values(original).reduce((sum, text) => sum + Buffer.byteLength(text), 0),
  );
  t.same(result.manifest, JSON.parse(original['manifest.json']!));
});

t.test('names are normalised: a leading ./ is dropped, the root entry skipped, long names in pax headers kept', async (t) => {
  const long = `logs/${'l'.repeat(150)}.log`;
  const { archive, dest } = await workspace(
    t,
    gzipSync(
      rawTar([
        { path: './', type: 'Directory' },
        { path: './manifest.json', body: JSON.stringify(TEST_MANIFEST) },
        { path: './logs/', type: 'Directory' },
        { path: long, body: 'long', pax: true },
      ]),
    ),
  );
  const result = await extractSnapshot(archive, dest);
  t.match(result, { ok: true, files: ['manifest.json', long] });
  t.equal(await readFile(join(dest, long), 'utf8'), 'long');
});

t.test('an entry listed again as node-tar lists a folder and its files: the repeat is skipped, the first copy kept', async (t) => {
  const { root, archive, dest } = await workspace(
    t,
    gzipSync(
      rawTar([
        { path: 'config/', type: 'Directory' },
        manifestEntry,
        { path: 'config/bigip.conf', body: 'first' },
        { path: 'config/', type: 'Directory' },
        { path: './config/bigip.conf', body: 'again' },
        { path: 'config/bigip.conf', body: 'first' },
      ]),
    ),
  );
  const result = await extractSnapshot(archive, dest);
  t.match(result, { ok: true, files: ['manifest.json', 'config/bigip.conf'], unpackedBytes: JSON.stringify(TEST_MANIFEST).length + 5 });
  t.equal(await readFile(join(dest, 'config/bigip.conf'), 'utf8'), 'first', 'the first copy stays (the repeats are never written)');
  t.same(await tree(root), [
    'archive.tgz',
    'work',
    'work/dest',
    'work/dest/config',
    'work/dest/config/bigip.conf',
    'work/dest/manifest.json',
  ]);
});

t.test('modes from the archive are not kept', async (t) => {
  const { archive, dest } = await workspace(
    t,
    hostileArchive([
      { path: 'logs/', type: 'Directory', mode: 0o1777 },
      { path: 'logs/a.sh', body: 'x', mode: 0o6777 },
    ]),
  );
  t.ok((await extractSnapshot(archive, dest)).ok);
  t.equal((await stat(join(dest, 'logs/a.sh'))).mode & 0o7777, 0o644, 'no set-uid, set-gid, execute or world-write bits');
  t.equal((await stat(join(dest, 'logs'))).mode & 0o7000, 0, 'no sticky bit');
});
