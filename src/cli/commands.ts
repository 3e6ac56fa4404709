// The `portolan` command (bin/portolan.js, or src/cli/main.ts, loads it once the compile cache is on), on
// commander in the house style of usage.ts: `start` here; the others are their own modules' commands, loaded
// only when asked for (a start loads none of them) and given their arguments untouched (each parses and
// documents its own, `--help` included). The reference system is loaded by `start` alone (`portolan mock`
// does not pay for it), and a bare `portolan start`, as a service manager runs it, is started without
// loading commander (~20 ms).
import type { Setting } from '../lib/config.ts';
import type { TextOut } from './usage.ts';

type Io = { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; stdin: NodeJS.ReadStream; env: NodeJS.ProcessEnv };
/** For commands that write whole texts (their own newlines included). */
const lineIo = (io: Io) => ({
  stdout: (text: string) => void io.stdout.write(text),
  stderr: (text: string) => void io.stderr.write(text),
  env: io.env,
});

/** `start --help`'s list of settings, in commander's layout (the settings are the reference system's: loaded for this help only). */
async function settingsHelp(): Promise<string> {
  const [{ CONFIG_FILE_ENV }, { SETTINGS }, { Help }] = await Promise.all([
    import('../lib/config.ts'),
    import('../app/config.ts'),
    import('commander'),
  ]);
  const help = new Help();
  help.helpWidth = HELP_WIDTH;
  // Names up to 32 characters have their description beside them; a longer one has it on the next line.
  const width = 32;
  const items = SETTINGS.map((s: Setting) => {
    const description = `${s.description} (default: ${String(s.default)})`;
    if (s.env.length <= width) return help.formatItem(s.env, width, description, help);
    return `  ${s.env}\n${help.formatItem('', width, description, help).replace(/^ +/, ' '.repeat(width + 4))}`;
  });
  return `
Settings: environment variables, or the same keys in a JSON file named by ${CONFIG_FILE_ENV}
(nested keys as objects, e.g. {"ports": {"mapping": 9081}}); the environment wins.
${items.join('\n')}
`;
}

/** The width help is laid out for (usage.ts's default). */
const HELP_WIDTH = 100;

/** The commands that parse their own arguments: name, one-line description, and how to run them. */
const DELEGATED: readonly { name: string; summary: string; run: (args: string[], io: Io) => Promise<number> }[] = [
  {
    name: 'mock',
    summary: 'Mock every role from the specs with Prism, in one process.',
    run: async (args, io) => (await import('../../mocks/cli.ts')).runMockCommand(args, lineIo(io)),
  },
  {
    name: 'conformance',
    summary: 'Check a running service (the reference system, a mock, your own build) against the specs.',
    run: async (args, io) => (await import('../../conformance/cli.ts')).main(args, lineIo(io)),
  },
  {
    name: 'spec-diff',
    summary:
      'Compare two versions of the specs (git refs or two files): every change by operation as breaking, warning or info; fails on a breaking change without a major bump.',
    run: async (args, io) => (await import('../spec-diff/cli.ts')).runSpecDiffCommand(args, { ...lineIo(io), cwd: process.cwd() }),
  },
  {
    name: 'generate',
    summary:
      'Regenerate the SDKs and compiled contracts in generated/ from specs/, once or on every save (--watch); in a checkout of Portolan.',
    run: async (args, io) => (await import('./generate-command.ts')).runGenerateCommand(args, lineIo(io)),
  },
  {
    name: 'users',
    summary: 'Add, change, remove and list users (the administrative account, registration users).',
    run: async (args, io) => (await import('./users.ts')).runUsersCommand(args, io),
  },
  {
    name: 'snapshot',
    summary: 'Upload snapshots to the diagnostics service, wait for them, read their hits and reports.',
    run: async (args, io) => (await import('./snapshot.ts')).runSnapshotCommand(args, io),
  },
  {
    name: 'haproxy-config',
    summary: 'Write the HAProxy configuration that balances processes of every role on several machines (one PostgreSQL, one Redis).',
    run: async (args, io) => (await import('./haproxy-command.ts')).runHaproxyConfigCommand(args, { ...lineIo(io), env: io.env }),
  },
];

/** `portolan start`: every configured role, until SIGINT or SIGTERM. Resolves once running; 2 when it cannot start. */
async function start(io: Io): Promise<number> {
  // A worker of `start --workers N`, forked by the primary: its start comes from the primary (workers-start.ts).
  const workers = await import('./workers-start.ts');
  if (workers.isWorkerProcess()) return workers.startWorker(io);
  const [
    { loadConfig },
    { createLogger },
    { systemClock },
    { systemTimers },
    { startBanner },
    { startSystem },
    { explainStartFailure },
    { compactWhenIdle },
  ] = await Promise.all([
    import('../app/config.ts'),
    import('../lib/logger.ts'),
    import('../lib/clock.ts'),
    import('../lib/timers.ts'),
    import('./banner.ts'),
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
  if (config.workers > 1) {
    // Counters every worker shares when none are named (a SQLite file beside the database).
    const shared = (await import('../app/cluster.ts')).sharedDefaults(io.env, config.workers, config.database);
    const env = { ...io.env, ...shared };
    return workers.startPrimary(Object.keys(shared).length === 0 ? config : loadConfig(env), { ...io, env });
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
  io.stdout.write(startBanner(system.roles, { docs: config.referencePages }));
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
 * Usage errors (unknown command or option) are one line and the pointer to --help, exit 2.
 *
 * @example
 * process.exitCode = await runPortolan(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });
 */
export async function runPortolan(argv: readonly string[], io: Io): Promise<number> {
  if (argv.length === 1 && argv[0] === 'start') return start(io);
  const [{ portolanCommand, runCommandLine, usageError }, { packageVersion }, { InvalidArgumentError }] = await Promise.all([
    import('./usage.ts'),
    import('../lib/version.ts'),
    import('commander'),
  ]);
  // What `start --workers` accepts: the setting's own pattern (the settings are loaded for `start` only).
  const workersPattern = argv[0] === 'start' ? new RegExp((await import('../lib/config.ts')).WORKERS_PATTERN) : /^$/;
  const out: TextOut = lineIo(io);
  // `portolan help <command>` is `portolan <command> --help`: the commands below document themselves.
  if (argv[0] === 'help' && argv.length === 2 && argv[1] !== 'start') {
    const delegated = DELEGATED.find((command) => command.name === argv[1]);
    if (!delegated) return usageError('', out, `unknown command '${argv[1]}'`);
    return delegated.run(['--help'], io);
  }
  // Only `start`'s help lists the settings (`portolan start --help`, `portolan help start`).
  const startHelp = argv[0] === 'start' || argv[0] === 'help' ? await settingsHelp() : '';
  let code = 0;
  const program = portolanCommand('', out, () => HELP_WIDTH)
    .description(
      'Contract-first toolkit for a traffic-management service: the reference system, mocks, conformance checks, SDK generation and spec comparison.',
    )
    .version(packageVersion(), '-V, --version', 'print the version of Portolan')
    .enablePositionalOptions()
    // The commands by name: each one's own --help says its arguments.
    .configureHelp({ subcommandTerm: (command) => command.name() })
    .addHelpText(
      'after',
      "\nRun 'portolan <command> --help' for a command's options.\nTo begin: 'portolan start' runs the reference system and prints each role's URL and its reference pages (/docs).",
    );
  program
    .command('start')
    .description(
      'Start the reference system: its roles (gateway, mapping, device, central, diagnostics, login), each on its own port, until Ctrl-C or SIGTERM.',
    )
    .option(
      '--workers <count>',
      "processes that serve the roles together, sharing each role's port: 1 to 256, or auto (one per core); default: PORTOLAN_WORKERS, else 1",
      (value: string) => {
        if (!workersPattern.test(value)) throw new InvalidArgumentError('use a whole number from 1 to 256, or auto.');
        return value;
      },
    )
    .addHelpText('after', startHelp)
    .action(async (options: { workers?: string }) => {
      // The option wins over the setting: the same value, read by the same declaration.
      code = await start(options.workers === undefined ? io : { ...io, env: { ...io.env, PORTOLAN_WORKERS: options.workers } });
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
  return runCommandLine(program, argv, () => code);
}
