// The read-only git calls spec-diff needs: resolve a ref, read a file at a commit.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The commit a ref names, or undefined when this clone does not have it. */
export async function resolveCommit(cwd: string, ref: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The top of the work tree `cwd` is in; throws with git's message when it is not in one. */
export async function repositoryRoot(cwd: string): Promise<string> {
  const { stdout } = await run('git', ['rev-parse', '--show-toplevel'], { cwd });
  return stdout.trim();
}

/** A file's text at a commit, undefined when the commit has no such file. */
export async function readAtCommit(cwd: string, commit: string, path: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['show', `${commit}:${path}`], { cwd, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch {
    return undefined;
  }
}
