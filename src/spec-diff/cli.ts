// `portolan spec-diff`: compares specs and lists every change by operation with its severity and check id;
// exit 1 when a spec has a breaking change without a major info.version bump. Three ways to name what
// to compare: a git ref (specs/*.yaml there against the working tree), two git refs, or two spec files.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option } from 'commander';
import { INTERFACES } from '../lib/spec-catalog.ts';
import { portolanCommand, runCommandLine, type TextOut, usageError } from '../cli/usage.ts';
import { compareFiles, compareSpecs } from './compare.ts';
import { DEFAULT_CONFIG_FILE, loadConfig, type SpecDiffConfig } from './config.ts';
import { isShallow, repositoryRoot, resolveCommit } from './git.ts';
import { formatChecks, formatJson, formatMarkdown, formatText, type Side, type SpecDiffReport } from './report.ts';
import { describeFailure } from './verdict.ts';

/** Where the command writes whole texts (newlines included), its environment, and the directory it runs in. */
export type SpecDiffIo = TextOut & { env: Record<string, string | undefined>; cwd?: string };

const NAME = 'spec-diff';
const NAMES: readonly string[] = INTERFACES.map((i) => i.name);
const FORMATS = ['text', 'json', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

const HELP_AFTER = `
Examples:
  portolan spec-diff main                   specs/*.yaml at main against the working tree
  portolan spec-diff origin/main HEAD       the specs at two commits (what a pull request changes)
  portolan spec-diff old.yaml new.yaml      two spec files (no git needed)
  portolan spec-diff main --spec mapping --format markdown

An argument that names an existing file is a file; otherwise it is a git ref.
Severities: each change shows its check id; ${DEFAULT_CONFIG_FILE} in the current directory (or --config)
sets a check to breaking, warning, info or off:   severity: { response-enum-widened: warning }

Exit codes:
  0  no breaking change without a major info.version bump (warnings and info never fail)
  1  a spec has a breaking change and its info.version major did not go up (stderr names the version to bump to)
  2  a usage error, an unknown ref, or a spec or config file that cannot be read or compared
`;

type Options = { spec?: string; format: Format; json?: boolean; config?: string; listChecks?: boolean };

const isFile = async (cwd: string, path: string) => {
  try {
    return (await stat(resolve(cwd, path))).isFile();
  } catch {
    return false;
  }
};

/**
 * Runs the command; resolves to the exit code (0 fine, 1 a breaking change lacks a major bump, 2 a usage
 * error, a git failure, a spec or config that cannot be read or compared, or no spec at all to compare).
 * @example await runSpecDiffCommand(['origin/main', 'HEAD', '--format', 'markdown'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env })
 */
export async function runSpecDiffCommand(argv: readonly string[], io: SpecDiffIo): Promise<number> {
  let code = 0;
  const program = portolanCommand(NAME, io)
    .description(
      'Compare specs and list every change, grouped by operation, as breaking, warning or info with its check id. Exit 1 when a spec has a breaking change without a major info.version bump.',
    )
    .argument('[old]', 'a git ref (the specs/*.yaml of that commit), or the older spec file')
    .argument('[new]', 'a git ref, or the newer spec file (default: the specs in the working tree)')
    .option('--spec <name>', `compare only specs/<name>.yaml (with git refs; one of ${NAMES.join(', ')})`)
    .addOption(
      new Option('--format <format>', 'output: text, markdown (a pull-request comment) or json (for scripts)')
        .choices(FORMATS)
        .default('text'),
    )
    .option('--json', 'same as --format json')
    .option('--config <file>', `severity overrides (default: ${DEFAULT_CONFIG_FILE} in the current directory, when there is one)`)
    .option('--list-checks', 'list every check id with its severity and what it finds, then exit')
    .addHelpText('after', HELP_AFTER)
    .action(async (old: string | undefined, now: string | undefined, options: Options) => {
      code = await specDiff(old, now, options, io);
    });
  return runCommandLine(program, argv, () => code);
}

async function specDiff(old: string | undefined, now: string | undefined, options: Options, io: SpecDiffIo): Promise<number> {
  const cwd = io.cwd ?? process.cwd();
  const fail = (message: string) => {
    io.stderr(`portolan ${NAME}: ${message.split('\n')[0]}\n`);
    return 2;
  };
  if (options.json && options.format !== 'text' && options.format !== 'json')
    return usageError(NAME, io, `--json and --format ${options.format} ask for two outputs: keep one`);
  const format: Format = options.json ? 'json' : options.format;
  let config: SpecDiffConfig;
  try {
    config = await loadConfig(cwd, options.config);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (options.listChecks) {
    if (old !== undefined) return usageError(NAME, io, '--list-checks takes no arguments');
    io.stdout(`${formatChecks(format, config)}\n`);
    return 0;
  }
  if (old === undefined) return usageError(NAME, io, 'missing what to compare: a git ref, two git refs, or two spec files (old and new)');

  let report: SpecDiffReport;
  const [oldIsFile, newIsFile] = await Promise.all([isFile(cwd, old), now === undefined ? false : isFile(cwd, now)]);
  if (oldIsFile || newIsFile) {
    if (now === undefined)
      return usageError(NAME, io, `'${old}' is a file: name two spec files (old and new), or a git ref to compare specs/*.yaml with`);
    if (!oldIsFile || !newIsFile) {
      const [file, other] = oldIsFile ? [old, now] : [now, old];
      return usageError(NAME, io, `'${file}' is a file but '${other}' is not: name two spec files, or two git refs`);
    }
    if (options.spec !== undefined) return usageError(NAME, io, '--spec picks a spec at git refs: with two files, leave it out');
    try {
      const verdict = await compareFiles(cwd, old, now, config);
      report = { before: { kind: 'file', path: old }, after: { kind: 'file', path: now }, verdicts: [verdict], added: [] };
    } catch (error) {
      return fail((error as Error).message);
    }
  } else {
    if (options.spec !== undefined && !NAMES.includes(options.spec))
      return usageError(NAME, io, `unknown spec '${options.spec}' for --spec (one of ${NAMES.join(', ')})`);
    let root: string;
    try {
      root = await repositoryRoot(cwd);
    } catch {
      return fail(`'${old}' is not a file, and ${cwd} is not inside a git work tree: name two spec files, or run it in a clone`);
    }
    const sides: Side[] = [];
    for (const ref of now === undefined ? [old] : [old, now]) {
      const commit = await resolveCommit(root, ref);
      if (!commit) {
        const hint = (await isShallow(root))
          ? 'this clone is shallow: fetch the history first (git fetch --unshallow, or actions/checkout with fetch-depth: 0)'
          : 'fetch it, or check the name';
        return usageError(NAME, io, `unknown git ref '${ref}': not a commit in this clone nor a file (${hint})`);
      }
      sides.push({ kind: 'commit', ref, commit });
    }
    const [before, after] = sides as [Extract<Side, { kind: 'commit' }>, Extract<Side, { kind: 'commit' }> | undefined];
    try {
      const { verdicts, added } = await compareSpecs(root, before.commit, options.spec ? [options.spec] : NAMES, {
        ...(after ? { after: after.commit } : {}),
        config,
      });
      report = { before, after: after ?? { kind: 'working-tree' }, verdicts, added };
    } catch (error) {
      return fail((error as Error).message);
    }
  }
  if (config.file) report.config = config.file;

  const text = format === 'json' ? formatJson(report) : (format === 'markdown' ? formatMarkdown(report) : formatText(report)).join('\n');
  io.stdout(`${text}\n`);
  const failed = report.verdicts.filter((v) => v.requiredVersion);
  for (const v of failed) io.stderr(`${describeFailure(v)[0]!}\n`);
  return failed.length > 0 ? 1 : 0;
}
