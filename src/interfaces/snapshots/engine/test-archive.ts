// Builds snapshot archives for tests: good ones from an in-memory file map, and hostile ones that no
// careful archiver would write (`..` and absolute names, links, devices, lying sizes), from raw tar
// headers encoded with the tar library's own Header and Pax classes.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create, Header, Pax, type ReadEntry } from 'tar';
import { MANIFEST_FORMAT, type Manifest } from './manifest.ts';

export type RawEntry = {
  path: string;
  type?: ReadEntry['type'];
  body?: string | Buffer;
  /** The size the header declares; the body's length when absent. */
  size?: number;
  linkpath?: string;
  mode?: number;
  /** Give the name in a pax extended header (the ustar header then carries a harmless placeholder). */
  pax?: boolean;
};

export const TEST_MANIFEST: Manifest = {
  format: MANIFEST_FORMAT,
  hostname: 'device-1.example.net',
  chassisSerial: 'PTL-0001-4242',
  platform: 'portolan-reference',
  version: '17.1.0',
  generatedAt: '2026-11-02T09:30:00Z',
};

const block = (length: number) => Buffer.alloc((512 - (length % 512)) % 512);

/** An uncompressed tar stream of exactly these entries, with the end-of-archive records unless `end` is false. */
export function rawTar(entries: readonly RawEntry[], { end = true } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const body = typeof entry.body === 'string' ? Buffer.from(entry.body) : (entry.body ?? Buffer.alloc(0));
    if (entry.pax) parts.push(new Pax({ path: entry.path }).encode());
    const header = Buffer.alloc(512);
    new Header({
      path: entry.pax ? 'placeholder' : entry.path,
      type: entry.type ?? 'File',
      size: entry.size ?? body.length,
      mode: entry.mode ?? 0o644,
      uid: 0,
      gid: 0,
      mtime: new Date(0),
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
    }).encode(header, 0);
    parts.push(header, body, block(body.length));
  }
  if (end) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A snapshot archive (gzip'd tar) of `files`, with `manifest.json` from TEST_MANIFEST first unless `files` has one. */
export function snapshotArchive(files: Readonly<Record<string, string | Buffer>>): Buffer {
  const all = { 'manifest.json': JSON.stringify(TEST_MANIFEST), ...files };
  return gzipSync(rawTar(Object.entries(all).map(([path, body]) => ({ path, body }))));
}

/** A gzip'd tar of raw entries, after a valid manifest. */
export const hostileArchive = (entries: readonly RawEntry[]) =>
  gzipSync(rawTar([{ path: 'manifest.json', body: JSON.stringify(TEST_MANIFEST) }, ...entries]));

/**
 * `bytes` of zeros (whole MiB) as gzip data: a chain of gzip members of 1 MiB of zeros each (about 1 KiB
 * apiece), so a bomb of hundreds of MiB is built in milliseconds. gunzip reads a chain of members as one stream.
 *
 * @example Buffer.concat([snapshotArchive({}), gzippedZeros(256 * 1024 * 1024)]) // zeros after the tar's end
 */
export function gzippedZeros(bytes: number): Buffer {
  const member = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
  return Buffer.concat(Array.from({ length: Math.ceil(bytes / (1024 * 1024)) }, () => member));
}

/** Packs a folder the way a producer would, with the tar library's own packer (`tar czf <file> -C <dir> .`). */
export const packFolder = (dir: string, file: string) => create({ gzip: true, portable: true, cwd: dir, file }, ['.']);

/** Every file under `dir`, as a map of relative POSIX path to text. */
export async function readFolder(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(dir, path).split(sep).join('/')] = await readFile(path, 'utf8');
  }
  return files;
}
