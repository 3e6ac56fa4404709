// The read-only git calls spec-diff needs: resolve a ref, read a file at a commit.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** git's own complaint, on one line (its first line of stderr, else the error's). */
const gitMessage = (error: unknown) => {
  const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
  return (stderr || (error as Error).message).split('\n')[0]!;
};

/**
 * The commit a ref names, or undefined when this clone does not have it.
 * @example await resolveCommit(process.cwd(), 'origin/main') // '3f2a…' (40 hex digits)
 */
export async function resolveCommit(cwd: string, ref: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The top of the work tree `cwd` is in; throws with git's message when it is not in one.
 * @example await repositoryRoot(process.cwd()) // '/home/me/portolan'
 */
export async function repositoryRoot(cwd: string): Promise<string> {
  const { stdout } = await run('git', ['rev-parse', '--show-toplevel'], { cwd });
  return stdout.trim();
}

/**
 * Whether the clone is shallow (a CI checkout with fetch-depth 1 has no other branch's commits).
 * @example await isShallow(process.cwd()) // false
 */
export async function isShallow(cwd: string): Promise<boolean> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--is-shallow-repository'], { cwd });
    return stdout.trim() === 'true';
  } catch {
    return false;
  }
}

/**
 * A file's text at a commit, undefined when the commit has no such path (the only failure that means
 * "absent"). Any other failure of git (a bad commit, a damaged object, a directory at that path) throws
 * one line naming the path and the commit.
 * @example await readAtCommit(root, commit, 'specs/mapping.yaml')
 */
export async function readAtCommit(cwd: string, commit: string, path: string): Promise<string | undefined> {
  let entry: string;
  try {
    // ls-tree answers nothing (and succeeds) for a path the commit does not have; it fails for a bad commit.
    ({ stdout: entry } = await run('git', ['ls-tree', '-z', '--full-tree', '--end-of-options', commit, '--', path], { cwd }));
  } catch (error) {
    throw new Error(`cannot read ${path} at ${commit}: ${gitMessage(error)}`);
  }
  const line = entry.split('\0').find((l) => l.endsWith(`\t${path}`));
  if (!line) return undefined;
  const [, type, object] = line.split('\t')[0]!.split(' ');
  if (type !== 'blob') throw new Error(`cannot read ${path} at ${commit}: it is a ${type}, not a file`);
  try {
    const { stdout } = await run('git', ['cat-file', 'blob', object!], { cwd, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    throw new Error(`cannot read ${path} at ${commit}: ${gitMessage(error)}`);
  }
}
