import { createReadStream, type Dirent } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Unpack, type ReadEntry } from 'tar';
import { quoteName } from './entry-path.ts';
import { EntryTable } from './entry-table.ts';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits } from './limits.ts';
import { validateManifest, type Manifest, type ManifestCheck } from './manifest.ts';
import { deviceManifest } from './device-archive.ts';
import { readHead } from './read-head.ts';
import { snapshotLayout } from './snapshot-layout.ts';

export type ExtractedSnapshot = {
  ok: true;
  manifest: Manifest;
  /** The files written, relative POSIX paths in archive order. */
  files: readonly string[];
  unpackedBytes: number;
  /** Bytes of the tar stream decompressed: up to its end marker (a little past it: gunzip's last chunk). */
  inflatedBytes: number;
  /** Links in the archive, left out: never written nor followed (how many, the first few names). */
  skippedLinks: { count: number; names: readonly string[] };
};
type Unpacked = { ok: true; table: EntryTable; inflatedBytes: number };
export type ExtractFailure = { ok: false; message: string };

const GZIP_MAGIC = [0x1f, 0x8b];
// What a second layer of compression starts with: gzip, zstd. tar would unpack either on its own.
const NESTED_MAGICS = [
  [0x1f, 0x8b],
  [0x28, 0xb5, 0x2f, 0xfd],
];

/**
 * Unpacks the snapshot archive at `archivePath` (a gzip'd tar, README.md "Archive format") into
 * `destDir`, streaming: the archive is never read whole. `destDir` must not exist (its parent must)
 * or be an empty directory. Every entry is judged before anything of it is written (EntryTable),
 * tar's own protections stay on (strict, no absolute or `..` paths, no writing through links, a
 * depth limit), and the result is checked again on disk. On failure nothing is left in `destDir`
 * (and a `destDir` this call created is removed); the message says why, quoting entry names escaped.
 *
 * @example
 * const result = await extractSnapshot('/data/snapshots/7/upload.tgz', '/data/snapshots/7/files');
 * if (!result.ok) markFailed(result.message); else evaluate(result.manifest, result.files);
 */
export async function extractSnapshot(
  archivePath: string,
  destDir: string,
  limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS,
): Promise<ExtractedSnapshot | ExtractFailure> {
  const dest = resolve(destDir);
  const prepared = await prepareDestination(dest).catch((error: unknown) => {
    if (!isSystemError(error)) throw error;
    return { ok: false as const, message: `the destination ${dest} cannot be created (${error.code})` };
  });
  if (!prepared.ok) return prepared;
  let result: ExtractedSnapshot | ExtractFailure;
  try {
    const unpacked = await unpackArchive(archivePath, dest, limits);
    result = unpacked.ok ? await checkUnpacked(dest, unpacked, limits) : unpacked;
  } catch (error) {
    // A file system failure (disk full, permissions) fails this snapshot; anything else is a bug.
    if (!isSystemError(error)) {
      await clean(dest, prepared.created);
      throw error;
    }
    result = { ok: false, message: `the archive could not be unpacked (${error.code})` };
  }
  if (!result.ok) await clean(dest, prepared.created);
  return result;
}

async function prepareDestination(dest: string): Promise<{ ok: true; created: boolean } | ExtractFailure> {
  const stat = await lstat(dest).catch((error: unknown) =>
    isSystemError(error) && error.code === 'ENOENT' ? undefined : Promise.reject(error),
  );
  if (!stat) {
    await mkdir(dest, { mode: 0o755 });
    return { ok: true, created: true };
  }
  if (!stat.isDirectory() || (await readdir(dest)).length > 0)
    return { ok: false, message: `the destination ${dest} is not an empty directory` };
  return { ok: true, created: false };
}

async function clean(dest: string, created: boolean): Promise<void> {
  if (created) return rm(dest, { recursive: true, force: true });
  for (const name of await readdir(dest)) await rm(join(dest, name), { recursive: true, force: true });
}

async function unpackArchive(archivePath: string, dest: string, limits: ExtractLimits): Promise<Unpacked | ExtractFailure> {
  if (!startsWith(await readHead(archivePath, 2), GZIP_MAGIC))
    return { ok: false, message: 'the archive is not gzip data (a snapshot is a gzip-compressed tar archive)' };

  const table = new EntryTable(limits);
  const judged = new WeakSet<ReadEntry>();
  let failure: string | undefined;
  let tarEnded = false;
  let signalStop!: () => void;
  const stopped = new Promise<void>((resolve) => (signalStop = resolve));
  const refuse = (message: string) => {
    if (failure !== undefined) return;
    failure = message;
    signalStop();
  };

  const unpack = new Unpack({
    cwd: dest,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    keep: true,
    unlink: false,
    noMtime: true,
    maxDepth: limits.maxDepth,
    filter: (_path, entry) => {
      if (failure !== undefined || !('type' in entry)) return false;
      judged.add(entry);
      const admission = table.admit(entry);
      if (admission.kind === 'refuse') refuse(admission.message);
      return admission.kind === 'write';
    },
    // Modes from the archive are not kept (no set-uid, no world-writable files).
    onReadEntry: (entry) => {
      entry.mode = entry.type === 'Directory' ? 0o755 : 0o644;
    },
  });
  // tar reports a damaged archive with its own TAR_* codes, a failing file system with the system's (ENOSPC, EACCES).
  unpack.on('error', (error: Error & { code?: string }) =>
    refuse(
      error.code?.startsWith('TAR_') === false
        ? `the archive could not be unpacked (${error.code})`
        : `the archive is not a valid tar archive (${tarMessage(error)})`,
    ),
  );
  // The end-of-archive records: whatever follows them (gzip'd zeros, more gzip members) is never decompressed.
  // Fed on, tar would keep every later chunk, copying its whole buffer each time (quadratic).
  unpack.on('eof', () => {
    tarEnded = true;
    signalStop();
  });
  // Entries tar skips, body and all, without asking the filter: an extended header (pax, GNU long name) over
  // its 1 MiB, and every type it does not know (GNU sparse files, volume headers). Their declared size would
  // otherwise be decompressed and thrown away up to the inflated-bytes bound.
  unpack.on('ignoredEntry', (entry: ReadEntry) => {
    if (judged.has(entry)) return; // the filter's own skip (the root `./`) or refusal
    refuse(
      entry.meta
        ? `the archive has an extended header (${entry.type}) of ${entry.size} bytes (at most 1 MiB)`
        : `entry ${quoteName(entry.path)} has an unsupported type (${entry.type})`,
    );
  });
  const closed = new Promise<void>((resolve) => unpack.on('close', resolve));

  const input = createReadStream(archivePath);
  const gunzip = createGunzip();
  input.on('error', (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  const bound = limits.maxInflatedBytes;
  let inflatedBytes = 0;
  const done = () => failure !== undefined || tarEnded;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (inflatedBytes === 0 && NESTED_MAGICS.some((magic) => startsWith(chunk, magic))) refuse('the archive is compressed twice');
      inflatedBytes += chunk.length;
      if (inflatedBytes > bound) refuse(`the archive inflates to more than ${bound} bytes`);
      if (done()) break;
      if (!unpack.write(chunk)) await Promise.race([new Promise((resolve) => unpack.once('drain', resolve)), stopped]);
      if (done()) break;
    }
  } catch (error) {
    const readFailed = isSystemError(error) && !error.code.startsWith('Z_');
    refuse(
      readFailed ? `the archive could not be read (${error.code})` : `the archive is not valid gzip data (${(error as Error).message})`,
    );
  } finally {
    input.destroy();
    gunzip.destroy();
  }
  // Ending (never aborting) lets tar finish or close every file it started before it says 'close',
  // so a failed archive is cleaned up only once nothing more can be written.
  unpack.end();
  await closed;
  return failure === undefined ? { ok: true, table, inflatedBytes } : { ok: false, message: failure };
}

/** Checks what is on disk again (regular files and directories only, the files admitted, the sizes), then the manifest. */
async function checkUnpacked(
  dest: string,
  { table, inflatedBytes }: Unpacked,
  limits: ExtractLimits,
): Promise<ExtractedSnapshot | ExtractFailure> {
  const expected = new Set(table.files);
  let bytes = 0;
  let count = 0;
  for (const entry of (await readdir(dest, { recursive: true, withFileTypes: true })) as Dirent[]) {
    const path = relative(dest, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (entry.isDirectory()) continue;
    if (!entry.isFile() || !expected.has(path)) return { ok: false, message: `unexpected entry ${JSON.stringify(path)} after unpacking` };
    bytes += (await lstat(join(dest, path))).size;
    count++;
  }
  if (count !== expected.size || bytes > limits.maxUnpackedBytes)
    return { ok: false, message: 'the unpacked files do not match the archive' };
  const layout = await snapshotLayout(dest);
  const manifest =
    layout.kind === 'device'
      ? { ok: true as const, manifest: await deviceManifest(dest, layout.root) }
      : await readManifest(dest, limits.maxManifestBytes);
  return manifest.ok
    ? { ok: true, manifest: manifest.manifest, files: table.files, unpackedBytes: bytes, inflatedBytes, skippedLinks: table.skippedLinks }
    : manifest;
}

/** Reads and checks `manifest.json` at the root of an unpacked snapshot (at most `maxBytes` of it). */
export async function readManifest(dir: string, maxBytes: number): Promise<ManifestCheck> {
  const path = join(dir, 'manifest.json');
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isFile())
    return {
      ok: false,
      message:
        'manifest.json is missing at the root of the archive, and it is no device archive either (config/bigip.conf or config/bigip_base.conf at its root)',
    };
  if (stat.size > maxBytes) return { ok: false, message: `manifest.json is larger than ${maxBytes} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return { ok: false, message: 'manifest.json is not valid JSON' };
  }
  return validateManifest(value);
}

const startsWith = (chunk: Buffer, magic: readonly number[]) => chunk.length >= magic.length && magic.every((byte, i) => chunk[i] === byte);

/** tar's messages carry its warning code (`TAR_ENTRY_ERROR: ...`); the code adds nothing for a reader. */
const tarMessage = (error: Error) => error.message.replace(/^TAR_[A-Z_]+: /, '').slice(0, 200);

const isSystemError = (error: unknown): error is NodeJS.ErrnoException & { code: string } =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
