import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { readManifest } from './extract.ts';
import type { Manifest } from './manifest.ts';
import { readHead } from './read-head.ts';

/** What the evaluator sees of a snapshot: its manifest, the names of all its files and the text of those the rules read. */
export type SnapshotContent = {
  readonly manifest: Manifest;
  /** Every file of the snapshot: relative POSIX paths, sorted. */
  readonly paths: readonly string[];
  /** The text (UTF-8) of the files the rule set reads, each cut at `maxFileBytes`. */
  readonly text: ReadonlyMap<string, string>;
  /** Files the rule set would read that were left out because the read budget was spent. */
  readonly unread: readonly string[];
};

export type ReadLimits = { readonly maxFileBytes: number; readonly maxTotalBytes: number; readonly maxManifestBytes: number };
export const DEFAULT_READ_LIMITS: ReadLimits = Object.freeze({
  maxFileBytes: 4 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxManifestBytes: 64 * 1024,
});

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
  const manifest = await readManifest(dir, limits.maxManifestBytes);
  if (!manifest.ok) return manifest;
  const paths = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .filter((path) => path !== 'manifest.json')
    .sort();
  const text = new Map<string, string>();
  const unread: string[] = [];
  let budget = limits.maxTotalBytes;
  for (const path of paths.filter(reads)) {
    if (budget <= 0) {
      unread.push(path);
      continue;
    }
    const bytes = await readHead(join(dir, path), Math.min(limits.maxFileBytes, budget));
    budget -= bytes.length;
    text.set(path, bytes.toString('utf8'));
  }
  return { ok: true, content: { manifest: manifest.manifest, paths, text, unread } };
}
