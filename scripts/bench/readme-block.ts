// Writes a benchmark's result into docs/benchmarks.md between `<!-- <name> -->` and `<!-- /<name> -->`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The page that holds every benchmark's result block. */
export const BENCHMARKS_PAGE = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

/**
 * Replaces what lies between the block's markers; throws when the page has no such block.
 *
 * @example writeReadmeBlock('bench:mocks', '| ... |') // docs/benchmarks.md's bench:mocks block now holds the table
 */
export function writeReadmeBlock(name: string, content: string, path = BENCHMARKS_PAGE): void {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(open);
  const end = text.indexOf(close, start);
  if (start < 0 || end < 0) throw new Error(`${path} has no ${open} ... ${close} block`);
  writeFileSync(path, `${text.slice(0, start + open.length)}\n${content.trimEnd()}\n${text.slice(end)}`);
}
