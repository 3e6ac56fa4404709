// The `portolan` command (src/cli/main.ts loads it once the compile cache is on), on commander: `start`
// here; the others are their own modules' commands, loaded only when asked for (a start loads none of
// them) and given their arguments untouched (each parses and documents its own, `--help` included).
// The reference system is loaded by `start` alone (`portolan mock` does not pay for it), and a bare
// `portolan start`, as a service manager runs it, is started without loading commander (~20 ms).
import type { Setting } from '../lib/config.ts';

type Io = { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; stdin: NodeJS.ReadStream; env: NodeJS.ProcessEnv };
/** For commands that write whole texts (their own newlines included). */
const lineIo = (io: Io) => ({
  stdout: (text: string) => void io.stdout.write(text),
  stderr: (text: string) => void io.stderr.write(text),
  env: io.env,
});

/** `start --help`'s list of settings (the settings are the reference system's: loaded for this help only). */
async function settingsHelp(): Promise<string> {
  const [{ CONFIG_FILE_ENV }, { SETTINGS }] = await Promise.all([import('../lib/config.ts'), import('../app/config.ts')]);
  return `
Settings: environment variables, or the same keys in a JSON file named by ${CONFIG_FILE_ENV}
(nested keys as objects, e.g. {"ports": {"mapping": 9081}}); the environment wins.
${SETTINGS.map((s: Setting) => `  ${s.env.padEnd(34)} ${s.description} (default: ${String(s.default)})`).join('\n')}
`;
}

/** The commands that parse their own arguments: name, one-line description, and how to run them. */
const DELEGATED: readonly { name: string; summary: string; run: (args: string[], io: Io) => Promise<number> }[] = [
  {
    name: 'mock',
    summary: 'Mock every role from the specs with Prism, in one process (portolan mock --help).',
    run: async (args, io) => (await import('../../mocks/cli.ts')).runMockCommand(args, lineIo(io)),
  },
  {
    name: 'conformance',
    summary: 'Check a target (the reference, a mock, your build) against the specs (portolan conformance --help).',
    run: async (args, io) => (await import('../../conformance/cli.ts')).main(args, lineIo(io)),
  },
  {
    name: 'spec-diff',
    summary: 'List breaking and other changes of the specs since a git ref (portolan spec-diff --help).',
    // spec-diff writes one line per call, without its newline.
    run: async (args, io) =>
      (await import('../spec-diff/cli.ts')).runSpecDiffCommand(args, {
        stdout: (line) => void io.stdout.write(`${line}\n`),
        stderr: (line) => void io.stderr.write(`${line}\n`),
        env: io.env,
        cwd: process.cwd(),
      }),
  },
  {
    name: 'generate',
    summary: 'Regenerate the SDKs and compiled contracts in generated/ from specs/ (in a checkout of Portolan).',
    run: runGenerate,
  },
  {
    name: 'users',
    summary: 'Manage users: users add|passwd|remove|list [--profile <name>] <username> (portolan users --help).',
    run: async (args, io) => (await import('./users.ts')).runUsersCommand(args, io),
  },
  {
    name: 'snapshot',
    summary: 'Client of the snapshot diagnostics API: upload|wait|hits|report|list|delete|delete-all (portolan snapshot --help).',
    run: async (args, io) => (await import('./snapshot.ts')).runSnapshotCommand(args, io),
  },
];

async function runGenerate(args: string[], io: Io): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(
      'Usage: portolan generate [interface...]\n\nRegenerates generated/<interface>/ (types, SDK, compiled contract) from specs/<interface>.yaml, all interfaces when none is named, and the catalog of interfaces and the client runtime the SDKs share.\n',
    );
    return 0;
  }
  let generator: typeof import('../generate/index.ts');
  try {
    generator = await import('../generate/index.ts');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.stderr.write(
      'portolan generate runs in a checkout of Portolan (it needs src/generate/ and the devDependency @hey-api/openapi-ts): git clone, npm ci, then npm run generate.\n',
    );
    return 2;
  }
  // The specs on disk, not the last generated catalog: a new spec is generated before the catalog knows it.
  const catalog = generator.readSpecCatalog();
  if (catalog.problems.length > 0) {
    io.stderr.write(`${catalog.problems.join('\n')}\n`);
    return 2;
  }
  const known = catalog.entries.map((e) => e.name);
  const unknown = args.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    io.stderr.write(`Unknown interface ${unknown.map((n) => `'${n}'`).join(', ')}; known: ${known.join(', ')}.\n`);
    return 2;
  }
  for (const name of await generator.generate(undefined, args)) io.stdout.write(`generated/${name}\n`);
  return 0;
}

/** `portolan start`: every configured role, until SIGINT or SIGTERM. Resolves once running; 2 when it cannot start. */
async function start(io: Io): Promise<number> {
  const [
    { loadConfig },
    { createLogger },
    { systemClock },
    { systemTimers },
    { ROLE_DEFINITIONS },
    { startSystem },
    { explainStartFailure },
    { compactWhenIdle },
  ] = await Promise.all([
    import('../app/config.ts'),
    import('../lib/logger.ts'),
    import('../lib/clock.ts'),
    import('../lib/timers.ts'),
    import('../lib/roles.ts'),
    import('../app/system.ts'),
    import('./failures.ts'),
    import('./idle-compaction.ts'),
  ]);
  let config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    const line = explainStartFailure(error, io.env.PORTOLAN_DATABASE ?? '');
    if (line === undefined) throw error;
    io.stderr.write(`${line}\n`);
    return 2;
  }
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  let system;
  try {
    system = await startSystem(config, { logger, clock: systemClock });
  } catch (error) {
    const line = explainStartFailure(error, config.database);
    if (line === undefined) throw error;
    logger.flush?.();
    io.stderr.write(`${line}\n`);
    return 2;
  }
  for (const { role, url } of system.roles) io.stdout.write(`${role.padEnd(12)} ${url}  (${ROLE_DEFINITIONS[role].seed})\n`);
  io.stdout.write('Portolan is running. Ctrl-C stops it.\n');
  // The start's young generation given back once the process idles (idle-compaction.ts: ~30 MB of RSS).
  const cancelCompaction = compactWhenIdle({ timers: systemTimers });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    cancelCompaction();
    logger.info({ signal }, 'stopping');
    const limit = config.shutdownDrainMs + config.shutdownTimeoutMs + 5_000;
    const timer = setTimeout(() => {
      logger.error({ limitMs: limit }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, limit);
    timer.unref();
    await system.stop({ drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs });
    io.stdout.write('Portolan stopped.\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  return 0;
}

/**
 * Runs `portolan <argv>`; resolves with the exit code (a started system keeps the process alive).
 * Usage errors (unknown command or option) are one line and exit 2.
 */
export async function runPortolan(argv: readonly string[], io: Io): Promise<number> {
  if (argv.length === 1 && argv[0] === 'start') return start(io);
  const { Command, CommanderError } = await import('commander');
  // Only `start`'s help lists the settings (`portolan start --help`, `portolan help start`).
  const startHelp = argv[0] === 'start' || argv[0] === 'help' ? await settingsHelp() : '';
  let code = 0;
  const program = new Command('portolan')
    .description(
      'Contract-first toolkit for a traffic-management service: the reference system, mocks, conformance, SDK generation and spec checks.',
    )
    .enablePositionalOptions()
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .addHelpText('after', "\nRun `portolan <command> --help` for a command's own options.");
  program
    .command('start')
    .description('Start the roles of the reference system (gateway, mapping, device, central, diagnostics, login), each on its own port.')
    .addHelpText('after', startHelp)
    .action(async () => {
      code = await start(io);
    });
  for (const command of DELEGATED) {
    program
      .command(command.name)
      .description(command.summary)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .passThroughOptions()
      .argument('[arguments...]')
      .action(async (args: string[]) => {
        code = await command.run(args, io);
      });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // `--help` exits 0; a usage error (no command, `error: unknown command 'x'`, already written to stderr) 2.
    return error.exitCode === 0 ? 0 : 2;
  }
  return code;
}
