import { DEFAULT_READ_LIMITS, type ReadLimits, type SnapshotContent } from './content.ts';
import { readDeviceArchive } from './device-archive.ts';
import { readManifest } from './extract.ts';
import type { Manifest } from './manifest.ts';
import { listFiles, readSelected } from './read-files.ts';
import { snapshotLayout } from './snapshot-layout.ts';

export { DEFAULT_READ_LIMITS, type ReadLimits, type SnapshotContent } from './content.ts';

/**
 * A snapshot held in memory (tests, or a producer checking its own output): every file is readable.
 *
 * @example snapshotContent(manifest, { 'commands/df.txt': '...' })
 */
export function snapshotContent(manifest: Manifest, files: Readonly<Record<string, string>>): SnapshotContent {
  const text = new Map(Object.entries(files).filter(([path]) => path !== 'manifest.json'));
  return { manifest, paths: [...text.keys()].sort(), text, unread: [] };
}

/**
 * Reads an unpacked snapshot folder: the manifest, every file's name, and the text of the files
 * `reads` selects (the rule set's `reads`), at most `maxFileBytes` of each and `maxTotalBytes` in
 * all. Only regular files count; links and anything else are ignored.
 */
export async function readSnapshotFolder(
  dir: string,
  reads: (path: string) => boolean,
  limits: ReadLimits = DEFAULT_READ_LIMITS,
): Promise<{ ok: true; content: SnapshotContent } | { ok: false; message: string }> {
  const layout = await snapshotLayout(dir);
  if (layout.kind === 'device') return { ok: true, content: await readDeviceArchive(dir, layout.root, reads, limits) };
  const manifest = await readManifest(dir, limits.maxManifestBytes);
  if (!manifest.ok) return manifest;
  const paths = (await listFiles(dir)).filter((path) => path !== 'manifest.json');
  const { text, unread } = await readSelected(dir, paths.filter(reads), limits.maxFileBytes, limits.maxTotalBytes);
  return { ok: true, content: { manifest: manifest.manifest, paths, text, unread } };
}
