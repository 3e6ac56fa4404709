// Writes a benchmark's result into the README between `<!-- <name> -->` and `<!-- /<name> -->`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const readme = fileURLToPath(new URL('../../README.md', import.meta.url));

/** Replaces what lies between the block's markers; throws when the README has no such block. */
export function writeReadmeBlock(name: string, content: string, path = readme): void {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(open);
  const end = text.indexOf(close, start);
  if (start < 0 || end < 0) throw new Error(`${path} has no ${open} ... ${close} block`);
  writeFileSync(path, `${text.slice(0, start + open.length)}\n${content.trimEnd()}\n${text.slice(end)}`);
}
