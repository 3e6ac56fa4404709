// One help style and one usage-error style for every `portolan` command: each command is a commander
// program made by `portolanCommand`, and run by `runCommandLine`.
//   help:         commander's own layout (Usage, description, Arguments, Options, Commands), on stdout, exit 0;
//   usage error:  one line naming what is wrong, then one line pointing at --help, on stderr, exit 2.
// A subcommand made with `.command()` inherits both and names itself: `portolan users add: missing required
// argument 'username'` then `Run 'portolan users add --help' for usage.`
import { Command, CommanderError, type HelpContext } from 'commander';

/** Where a command writes whole texts (their newlines included). */
export type TextOut = { stdout: (text: string) => void; stderr: (text: string) => void };

/** Exit code of a usage error (an unknown option, a missing argument, a value out of range). */
export const USAGE_EXIT = 2;

/** `portolan` and what follows it (`mock`, `users add`); the empty name is the top-level command. */
const commandLine = (name: string) => (name === '' ? 'portolan' : `portolan ${name}`);

/**
 * The pointer line under every usage error.
 *
 * @example helpPointer('mock') // "Run 'portolan mock --help' for usage."
 */
export const helpPointer = (name: string) => `Run '${commandLine(name)} --help' for usage.`;

/**
 * The usage error commander would print (`error: unknown option '--x'\n(Did you mean --y?)`) as one line
 * prefixed with the command, plus the pointer to --help.
 *
 * @example usageErrorText('mock', "error: unknown option '--prot'\n(Did you mean --port?)\n")
 * // "portolan mock: unknown option '--prot' (Did you mean --port?)\nRun 'portolan mock --help' for usage.\n"
 */
export function usageErrorText(name: string, commanderText: string): string {
  const line = commanderText
    .replace(/^error:\s*/i, '')
    .split('\n')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join(' ');
  return `${commandLine(name)}: ${line}\n${helpPointer(name)}\n`;
}

/** A commander command whose subcommands (`.command()`) report their usage errors under their own name. */
class PortolanCommand extends Command {
  readonly #io: TextOut;
  /** What follows `portolan` (`users add`). */
  readonly #path: string;

  constructor(path: string, io: TextOut) {
    super(path === '' ? 'portolan' : path.split(' ').at(-1));
    this.#io = io;
    this.#path = path;
  }

  override createCommand(name?: string): Command {
    return new PortolanCommand(this.#path === '' ? (name ?? '') : `${this.#path} ${name ?? ''}`, this.#io);
  }

  override copyInheritedSettings(source: Command): this {
    super.copyInheritedSettings(source);
    const path = this.#path;
    return this.configureOutput({ outputError: (text) => this.#io.stderr(usageErrorText(path, text)) });
  }

  /** A command that needs a subcommand, run without one (`portolan`, `portolan users`): its help, on stdout, exit 0. */
  override help(context?: HelpContext | ((text: string) => string)): never {
    super.help((typeof context === 'object' && context.error ? { error: false } : context) as HelpContext);
  }
}

/**
 * A commander program in the house style. `name` is what follows `portolan` (`mock`, `snapshot`, `spec-diff`;
 * '' for `portolan` itself); subcommands made with `.command()` inherit the output settings.
 *
 * @example
 * const program = portolanCommand('users', io).description('Manage users.');
 * program.command('list').action(() => { ... });
 */
export function portolanCommand(name: string, io: TextOut, width?: () => number): Command {
  const columns = () => Math.min(120, width?.() ?? 100);
  const program = new PortolanCommand(name, io);
  // The usage line names the whole command line (`Usage: portolan mock [options]`).
  if (name !== '') program.name(commandLine(name));
  return program
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      getOutHelpWidth: columns,
      getErrHelpWidth: columns,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
      outputError: (text) => io.stderr(usageErrorText(name, text)),
    });
}

/**
 * A usage error found after parsing (two options that exclude each other, a bad value): same two lines, exit 2.
 *
 * @example return usageError('mock', io, "--port-offset must be a whole number, got 'x'");
 */
export function usageError(name: string, io: TextOut, message: string): number {
  io.stderr(usageErrorText(name, message));
  return USAGE_EXIT;
}

/**
 * Parses `argv` with `program` and resolves to the exit code: 0 after --help or --version, 2 after a usage
 * error (already written as two lines), else what the action left in `code()`.
 *
 * @example
 * let code = 0;
 * const program = portolanCommand('users', io).action(async () => { code = await work(); });
 * process.exitCode = await runCommandLine(program, process.argv.slice(2), () => code);
 */
export async function runCommandLine(program: Command, argv: readonly string[], code: () => number): Promise<number> {
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
    return error.exitCode === 0 ? 0 : USAGE_EXIT;
  }
  return code();
}
