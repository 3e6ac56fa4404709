// Compares specs: `specs/<name>.yaml` at a commit with the same file at another commit or in the working
// tree (one verdict per spec: a spec new since has nothing to break, one deleted since breaks every
// operation), or two spec files named on the command line.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { applyConfig, type SpecDiffConfig } from './config.ts';
import { readAtCommit } from './git.ts';
import { diffSpecs } from './load.ts';
import { judge, type SpecVerdict } from './verdict.ts';

/** What was compared: one verdict per spec present before, and the names of the specs new since. */
export type Comparison = { verdicts: SpecVerdict[]; added: string[] };

/** Options of a comparison: the newer commit (the working tree when absent) and the config in effect. */
export type CompareOptions = { after?: string; config?: SpecDiffConfig };

const NO_CONFIG: SpecDiffConfig = { severity: new Map() };
const DELETED = (name: string) => ({ openapi: '3.1.0', info: { title: name, version: '(deleted)' }, paths: {} });
const short = (commit: string) => commit.slice(0, 12);

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
 * Every spec name (`specs/<name>.yaml`) at the commit `before` against `options.after` (a commit) or the
 * working tree. A spec absent before is new: nothing to break (listed in `added`). Throws one line when
 * git fails, when a spec cannot be read or compared, and when none of the specs is on either side
 * (nothing was compared: not the project's clone, or the wrong names).
 * @example await compareSpecs('/work/main', 'HEAD~1', ['mapping'])
 * @example await compareSpecs('/work/main', mainCommit, ['mapping'], { after: headCommit })
 */
export async function compareSpecs(
  root: string,
  before: string,
  names: readonly string[],
  options: CompareOptions = {},
): Promise<Comparison> {
  const verdicts: SpecVerdict[] = [];
  const added: string[] = [];
  const { after } = options;
  const afterLabel = after === undefined ? 'in the working tree' : `at ${short(after)}`;
  for (const name of names) {
    const file = `specs/${name}.yaml`;
    const old = await readAtCommit(root, before, file);
    const now = after === undefined ? await readWorkingTree(root, file) : await readAtCommit(root, after, file);
    if (old === undefined) {
      if (now !== undefined) added.push(name);
      continue;
    }
    // A spec deleted since removes every operation it had.
    const { version, changes } = await diffSpecs(old, now ?? DELETED(name), { before: `at ${short(before)}`, after: afterLabel }).catch(
      (error: Error) => {
        throw new Error(`${file}: cannot compare with ${before}: ${error.message.split('\n')[0]}`);
      },
    );
    // Of a deleted spec, its operations are what matters (not each of its schemas and servers, one by one).
    const reported = now === undefined ? changes.filter((c) => c.operation) : changes;
    verdicts.push(judge({ spec: name, file }, version, applyConfig(reported, options.config ?? NO_CONFIG)));
  }
  if (verdicts.length === 0 && added.length === 0) {
    const which = names.length === 1 ? `specs/${names[0]}.yaml is` : `none of specs/{${names.join(',')}}.yaml is`;
    const elsewhere = after === undefined ? `in the working tree ${root}` : `at ${short(after)}`;
    throw new Error(`nothing compared: ${which} at ${short(before)} or ${elsewhere} (run it from the project's clone)`);
  }
  return { verdicts, added };
}

/**
 * One verdict per spec name present at the commit, against the working tree (see compareSpecs).
 * @example await compareWithCommit('/work/main', 'HEAD~1', ['mapping'])
 */
export async function compareWithCommit(root: string, commit: string, names: readonly string[]): Promise<SpecVerdict[]> {
  return (await compareSpecs(root, commit, names)).verdicts;
}

/**
 * Two spec files (paths relative to `cwd`): one verdict, named by the newer file. Throws one line naming
 * the file that cannot be read or compared.
 * @example await compareFiles(process.cwd(), 'old.yaml', 'new.yaml')
 */
export async function compareFiles(cwd: string, before: string, after: string, config: SpecDiffConfig = NO_CONFIG): Promise<SpecVerdict> {
  const read = async (file: string) => {
    try {
      return await readFile(resolve(cwd, file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message.split('\n')[0]}`);
    }
  };
  const [old, now] = await Promise.all([read(before), read(after)]);
  const { version, changes } = await diffSpecs(old, now, { before, after });
  return judge({ file: after }, version, applyConfig(changes, config));
}
