// `portolan generate [interface...] [--watch]`: regenerates generated/ from specs/ (in a checkout of Portolan:
// the generator, src/generate/, and its devDependency @hey-api/openapi-ts are not in the package).
import type { Clock } from '../lib/clock.ts';
import type { Timers } from '../lib/timers.ts';
import { portolanCommand, runCommandLine, usageError, type TextOut } from './usage.ts';
import type { FolderWatch } from '../generate/watch.ts';

/** What the command works on and with; tests replace the folders, the watcher, the timers and Ctrl-C. */
export type GenerateDeps = {
  specsDir?: string;
  generatedDir?: string;
  watch?: FolderWatch;
  timers?: Timers;
  clock?: Clock;
  /** Calls `stop` on Ctrl-C (default: the process's first SIGINT; a second one exits at once). */
  onInterrupt?: (stop: () => void) => void;
};

const DESCRIPTION =
  'Regenerate generated/<interface>/ (types, SDK, compiled contract) from specs/<interface>.yaml: every interface when none is named, ' +
  'with the catalog of interfaces and the client runtime the SDKs share. Runs in a checkout of Portolan.';

/** Ctrl-C stops the watch (after a regeneration under way); a second Ctrl-C exits at once. */
function onSigint(stop: () => void): void {
  process.once('SIGINT', () => {
    process.once('SIGINT', () => process.exit(130));
    stop();
  });
}

/**
 * Runs `portolan generate <args>`; resolves to the exit code (a watch resolves once stopped).
 *
 * @example
 * process.exitCode = await runGenerateCommand(['mapping'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
 */
export async function runGenerateCommand(args: readonly string[], io: TextOut, deps: GenerateDeps = {}): Promise<number> {
  let code = 0;
  const program = portolanCommand('generate', io)
    .description(DESCRIPTION)
    .argument('[interface...]', 'the interfaces to regenerate (default: every one)')
    .option('-w, --watch', 'keep running: regenerate an interface each time its spec in specs/ is saved (Ctrl-C stops)')
    .addHelpText(
      'after',
      '\nExamples:\n  portolan generate              regenerate everything\n  portolan generate mapping      regenerate generated/mapping/\n  portolan generate --watch      regenerate each spec as you save it\n',
    )
    .action(async (names: string[], options: { watch?: boolean }) => {
      code = await generateCommand(names, options.watch === true, io, deps);
    });
  return runCommandLine(program, args, () => code);
}

async function generateCommand(names: string[], watch: boolean, io: TextOut, deps: GenerateDeps): Promise<number> {
  let generator: typeof import('../generate/index.ts');
  try {
    generator = await import('../generate/index.ts');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.stderr(
      'portolan generate: it runs in a checkout of Portolan (it needs src/generate/ and the devDependency @hey-api/openapi-ts): git clone, npm ci, then npx portolan generate.\n',
    );
    return 1;
  }
  const { GENERATED_DIR } = await import('../server/compiled-contract.ts');
  const specsDir = deps.specsDir ?? generator.SPECS_DIR;
  const generatedDir = deps.generatedDir ?? GENERATED_DIR;
  // The specs on disk, not the last generated catalog: a new spec is generated before the catalog knows it.
  const catalog = generator.readSpecCatalog(specsDir);
  const known = catalog.entries.map((e) => e.name);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    return usageError('generate', io, `unknown interface ${unknown.map((n) => `'${n}'`).join(', ')}; known: ${known.join(', ')}`);
  if (watch) return watchAndGenerate(names, specsDir, generatedDir, io, deps);
  if (catalog.problems.length > 0) {
    io.stderr(`${catalog.problems.join('\n')}\n`);
    return 1;
  }
  for (const name of await generator.generate(generatedDir, names, specsDir)) io.stdout(`generated/${name}\n`);
  return 0;
}

/** The watch: one line at start, one per regeneration or refused spec; resolves to 0 once stopped, 1 if watching failed. */
async function watchAndGenerate(
  names: readonly string[],
  specsDir: string,
  generatedDir: string,
  io: TextOut,
  deps: GenerateDeps,
): Promise<number> {
  const [{ watchSpecs }, { generate }, { systemTimers }, { systemClock }] = await Promise.all([
    import('../generate/watch.ts'),
    import('../generate/index.ts'),
    import('../lib/timers.ts'),
    import('../lib/clock.ts'),
  ]);
  const which = names.length === 0 ? 'every spec' : names.map((n) => `specs/${n}.yaml`).join(', ');
  io.stdout(`Watching ${which}: each save regenerates its interface in generated/. Press Ctrl-C to stop.\n`);
  const watching = watchSpecs({
    specsDir,
    generatedDir,
    names,
    regenerate: async (name) => void (await generate(generatedDir, [name], specsDir)),
    ...(deps.watch ? { watch: deps.watch } : {}),
    timers: deps.timers ?? systemTimers,
    clock: deps.clock ?? systemClock,
    print: (line) => io.stdout(`${line}\n`),
    printError: (line) => io.stderr(`${line}\n`),
  });
  const outcome = await new Promise<'stopped' | 'failed'>((resolve) => {
    (deps.onInterrupt ?? onSigint)(() => resolve('stopped'));
    void watching.failed.then(() => resolve('failed'));
  });
  await watching.stop();
  if (outcome === 'failed') return 1;
  io.stdout('Stopped watching.\n');
  return 0;
}
