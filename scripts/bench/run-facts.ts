// What the benchmark scripts share besides their loads: the commit measured, the median they keep, their
// --help (each script's opening comment) and the list of the profiles a --cpu-prof run wrote.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The commit measured, and whether the working tree differs from it. */
export function revision(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: new URL('../../', import.meta.url), encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'commit unknown';
  return `commit ${head.stdout.trim()}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? ' with uncommitted changes' : ''}`;
}

/**
 * The middle value (the mean of the two middle ones for an even count); NaN for none.
 *
 * @example median([3, 1, 2]) // 2
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** With --help: prints the script's opening comment (its usage) and exits. */
export function helpWhenAsked(asked: boolean | undefined, moduleUrl: string): void {
  if (!asked) return;
  const text = readFileSync(new URL(moduleUrl), 'utf8');
  console.log(text.slice(0, text.indexOf('\nimport ')).replace(/^\/\/ ?/gm, ''));
  process.exit(0);
}

/** The profiles a `--cpu-prof <dir>` run wrote: `<dir>/*-<pid>.cpuprofile`, and every file in the `subdirs` of `dir`. */
export function profilesWritten(dir: string, pid: number, subdirs: readonly string[]): string[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(`-${pid}.cpuprofile`))
    .map((f) => join(dir, f));
  for (const sub of subdirs.map((s) => join(dir, s))) if (existsSync(sub)) files.push(...readdirSync(sub).map((f) => join(sub, f)));
  return files;
}
