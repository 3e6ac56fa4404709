// `portolan spec-diff <git-ref> [--spec <name>] [--json]`: the specs at <git-ref> against the working
// tree, every change classified; exit 1 when a spec has a breaking change without a major version bump.
import { parseArgs } from 'node:util';
import { INTERFACES } from '../lib/spec-catalog.ts';
import { formatChange } from './change.ts';
import { compareSpecs, type Comparison } from './compare.ts';
import { repositoryRoot, resolveCommit } from './git.ts';
import { describeFailure } from './verdict.ts';

/** Where the command writes: one line per call, without its newline. */
export type SpecDiffIo = {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: Record<string, string | undefined>;
  cwd?: string;
};

const USAGE = 'usage: portolan spec-diff <git-ref> [--spec <name>] [--json]';
const NAMES: readonly string[] = INTERFACES.map((i) => i.name);

/**
 * Runs the command; resolves to the exit code (0 fine, 1 a breaking change lacks a major bump, 2 usage, a
 * git failure, a spec that cannot be compared, or no spec at all to compare).
 * @example await runSpecDiffCommand(['HEAD~3', '--spec', 'mapping'], { stdout: console.log, stderr: console.error, env: process.env })
 */
export async function runSpecDiffCommand(argv: string[], io: SpecDiffIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { spec: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    io.stderr(`spec-diff: ${(error as Error).message.split('\n')[0]} (${USAGE})`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(
      `${USAGE}\n  compares specs/*.yaml at <git-ref> with the working tree; exit 1 when a breaking change lacks a major info.version bump`,
    );
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr(`spec-diff: expected one git ref, got ${positionals.length} (${USAGE})`);
    return 2;
  }
  const ref = positionals[0]!;
  if (values.spec !== undefined && !NAMES.includes(values.spec)) {
    io.stderr(`spec-diff: unknown spec '${values.spec}' for --spec (one of ${NAMES.join(', ')})`);
    return 2;
  }
  let root: string;
  try {
    root = await repositoryRoot(io.cwd ?? process.cwd());
  } catch {
    io.stderr(`spec-diff: ${io.cwd ?? process.cwd()} is not inside a git work tree: run it from the project's clone`);
    return 2;
  }
  const commit = await resolveCommit(root, ref);
  if (!commit) {
    io.stderr(`spec-diff: unknown git ref '${ref}' (not a commit in this clone; fetch it or check the name)`);
    return 2;
  }
  let comparison: Comparison;
  try {
    comparison = await compareSpecs(root, commit, values.spec ? [values.spec] : NAMES);
  } catch (error) {
    io.stderr(`spec-diff: ${(error as Error).message.split('\n')[0]}`);
    return 2;
  }
  const { verdicts, added } = comparison;
  const failed = verdicts.filter((v) => v.requiredVersion);
  if (values.json) {
    io.stdout(JSON.stringify({ ref, commit, specs: verdicts, added }, null, 2));
  } else {
    for (const name of added) io.stdout(`specs/${name}.yaml: new since ${ref}, nothing to compare`);
    for (const v of verdicts) {
      io.stdout(
        `specs/${v.spec}.yaml (${v.version.before} -> ${v.version.after}): ${v.breaking.length} breaking, ${v.nonBreaking.length} non-breaking`,
      );
      for (const c of v.breaking) io.stdout(`  breaking ${formatChange(c)}`);
      for (const c of v.nonBreaking) io.stdout(`  non-breaking ${formatChange(c)}`);
    }
  }
  for (const v of failed) io.stderr(describeFailure(v)[0]!);
  return failed.length > 0 ? 1 : 0;
}
