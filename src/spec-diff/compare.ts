// Compares the specs of the working tree with the same specs at a commit: one verdict per spec (a spec
// new since the commit has nothing to break; one deleted since breaks every operation).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readAtCommit } from './git.ts';
import { diffSpecs } from './load.ts';
import { judge, type SpecVerdict } from './verdict.ts';

/**
 * One verdict per spec name (`specs/<name>.yaml`). A spec absent at the commit is new: nothing to break.
 * @example await compareWithCommit('/work/main', 'HEAD~1', ['mapping'])
 */
export async function compareWithCommit(root: string, commit: string, names: readonly string[]): Promise<SpecVerdict[]> {
  const verdicts: SpecVerdict[] = [];
  for (const name of names) {
    const file = `specs/${name}.yaml`;
    const before = await readAtCommit(root, commit, file);
    if (before === undefined) continue;
    // A spec deleted from the working tree removes every operation it had.
    const after = await readFile(join(root, file), 'utf8').catch(() => ({ openapi: '3.1.0', info: { title: name, version: '(deleted)' }, paths: {} }));
    const { version, changes } = await diffSpecs(before, after).catch((error: Error) => {
      throw new Error(`${file}: cannot compare with ${commit}: ${error.message.split('\n')[0]}`);
    });
    verdicts.push(judge(name, version, changes));
  }
  return verdicts;
}
