// Compares the specs of the working tree with the same specs at a commit: one verdict per spec (a spec
// new since the commit has nothing to break; one deleted since breaks every operation).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readAtCommit } from './git.ts';
import { diffSpecs } from './load.ts';
import { judge, type SpecVerdict } from './verdict.ts';

/** What was compared: one verdict per spec present at the commit, and the names of the specs new since. */
export type Comparison = { verdicts: SpecVerdict[]; added: string[] };

const DELETED = (name: string) => ({ openapi: '3.1.0', info: { title: name, version: '(deleted)' }, paths: {} });

/** The working-tree text of a spec, undefined when it has no such file; any other read failure throws. */
async function readWorkingTree(root: string, file: string): Promise<string | undefined> {
  try {
    return await readFile(join(root, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file} in the working tree: ${(error as Error).message}`);
  }
}

/**
 * Every spec name (`specs/<name>.yaml`) at the commit against the working tree. A spec absent at the commit
 * is new: nothing to break (listed in `added`). Throws one line when git fails, when a spec cannot be read
 * or compared, and when none of the specs is at the commit or in the working tree (nothing was compared:
 * not the project's clone, or the wrong names).
 * @example await compareSpecs('/work/main', 'HEAD~1', ['mapping'])
 */
export async function compareSpecs(root: string, commit: string, names: readonly string[]): Promise<Comparison> {
  const verdicts: SpecVerdict[] = [];
  const added: string[] = [];
  for (const name of names) {
    const file = `specs/${name}.yaml`;
    const before = await readAtCommit(root, commit, file);
    const after = await readWorkingTree(root, file);
    if (before === undefined) {
      if (after !== undefined) added.push(name);
      continue;
    }
    // A spec deleted from the working tree removes every operation it had.
    const { version, changes } = await diffSpecs(before, after ?? DELETED(name), {
      before: `at ${commit.slice(0, 12)}`,
      after: 'in the working tree',
    }).catch((error: Error) => {
      throw new Error(`${file}: cannot compare with ${commit}: ${error.message.split('\n')[0]}`);
    });
    verdicts.push(judge(name, version, changes));
  }
  if (verdicts.length === 0 && added.length === 0) {
    const which = names.length === 1 ? `specs/${names[0]}.yaml is` : `none of specs/{${names.join(',')}}.yaml is`;
    throw new Error(
      `nothing compared: ${which} at ${commit.slice(0, 12)} or in the working tree ${root} (run it from the project's clone)`,
    );
  }
  return { verdicts, added };
}

/**
 * One verdict per spec name present at the commit (see compareSpecs, which also names the new ones).
 * @example await compareWithCommit('/work/main', 'HEAD~1', ['mapping'])
 */
export async function compareWithCommit(root: string, commit: string, names: readonly string[]): Promise<SpecVerdict[]> {
  return (await compareSpecs(root, commit, names)).verdicts;
}
