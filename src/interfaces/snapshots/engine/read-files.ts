import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { readHead } from './read-head.ts';

/** Every regular file under `dir`: relative POSIX paths, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** The text of `paths` (relative to `dir`), at most `maxFileBytes` of each and `maxTotalBytes` in all; the rest listed unread. */
export async function readSelected(dir: string, paths: readonly string[], maxFileBytes: number, maxTotalBytes: number) {
  const text = new Map<string, string>();
  const unread: string[] = [];
  let budget = maxTotalBytes;
  for (const path of paths) {
    if (budget <= 0) {
      unread.push(path);
      continue;
    }
    const bytes = await readHead(join(dir, path), Math.min(maxFileBytes, budget));
    budget -= bytes.length;
    text.set(path, bytes.toString('utf8'));
  }
  return { text, unread };
}
