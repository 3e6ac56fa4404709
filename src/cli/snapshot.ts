// `portolan snapshot`: the client of the snapshot diagnostics API (C), on the generated SDK. It logs in at
// the login role with credentials from the environment (never from the command line), then uploads a
// snapshot (streamed from disk, a progress bar on a terminal), waits for it with bounded polling, prints
// its hits, downloads its report, lists and deletes. Every failure is one line naming what to fix.
// The commands are in snapshot-commands.ts, the session and its failures in snapshot-session.ts, the
// streamed upload in snapshot-upload.ts; this file is the command line.
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  hits,
  list,
  remove,
  report,
  upload,
  wait,
  type Context,
  type Outcome,
  type PollOptions,
  type SnapshotIo,
} from './snapshot-commands.ts';
import { DEFAULTS, EXIT, oneLine, SNAPSHOT_ID } from './snapshot-session.ts';

export { hitsTable, type SnapshotIo } from './snapshot-commands.ts';
export {
  DEFAULTS,
  EXIT,
  openSession,
  snapshotSettings,
  type Failure,
  type SnapshotSession,
  type SnapshotSettings,
} from './snapshot-session.ts';
export { uploadSnapshotStream, type UploadSource } from './snapshot-upload.ts';

const SETTINGS_HELP = `
Settings (environment variables only; credentials are never taken from the command line):
  PORTOLAN_DIAGNOSTICS_URL       diagnostics role (default ${DEFAULTS.diagnosticsUrl})
  PORTOLAN_LOGIN_URL             login role (default ${DEFAULTS.loginUrl})
  PORTOLAN_DIAGNOSTICS_USER      user id for the login form
  PORTOLAN_DIAGNOSTICS_PASSWORD  its password
  (when neither is set: PORTOLAN_ADMIN_USER, default admin, and PORTOLAN_ADMIN_PASSWORD)

Exit codes: 0 done, 1 failed (the message says why), 2 usage or settings,
            3 still processing when polling ran out.`;

function snapshotId(value: string): string {
  if (!SNAPSHOT_ID.test(value)) throw new InvalidArgumentError('a snapshot id is 1 to 64 letters, digits, _ or -.');
  return value;
}

function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || number > 3600)
    throw new InvalidArgumentError('must be a number of seconds above 0, at most 3600.');
  return number;
}

function count(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 100_000)
    throw new InvalidArgumentError('must be a whole number from 1 to 100000.');
  return number;
}

const pollOptions = (command: Command) =>
  command
    .addOption(
      new Option('--interval <seconds>', 'seconds between polls while the snapshot answers 202')
        .argParser(seconds)
        .default(DEFAULTS.intervalSeconds),
    )
    .addOption(new Option('--max-polls <count>', 'polls before giving up (exit 3)').argParser(count).default(DEFAULTS.maxPolls));

/** The command tree; each action hands its outcome to `done`. */
function snapshotProgram(
  context: Context,
  write: { out: (text: string) => void; err: (text: string) => void },
  done: (outcome: Outcome) => void,
): Command {
  const width = (stream: Writable) => Math.min(120, (stream as { columns?: number }).columns ?? 100);
  const program = new Command('portolan snapshot')
    .description(
      'Client of the snapshot diagnostics API (interface C): upload device snapshots, wait for their processing, read their hits and reports.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: write.out,
      writeErr: write.err,
      getOutHelpWidth: () => width(context.io.stdout),
      getErrHelpWidth: () => width(context.io.stderr),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', SETTINGS_HELP);
  const run =
    <A extends unknown[]>(action: (...args: A) => Promise<Outcome>) =>
    async (...args: A) =>
      done(await action(...args));
  const idArgument = ['<id>', 'snapshot id (0 is the shared sample)', snapshotId] as const;

  pollOptions(
    program
      .command('upload')
      .description('Upload a snapshot archive (streamed from disk; a progress bar on a terminal) and print its id.')
      .argument('<file>', 'the snapshot archive (gzip-compressed tar)')
      .option('--wait', 'then poll until it is processed (like `wait`)')
      .option('--description <text>', "set the snapshot's description after the upload"),
  ).action(run((file: string, options: { wait?: boolean; description?: string } & PollOptions) => upload(context, file, options)));

  pollOptions(
    program
      .command('wait')
      .description('Poll a snapshot while it is processing (202) until it is ready (200); exit 3 when polling runs out, 1 when it failed.')
      .argument(...idArgument),
  ).action(run((id: string, options: PollOptions) => wait(context, id, options)));

  program
    .command('hits')
    .description('Print the diagnostics of a processed snapshot as a table, most important first.')
    .argument(...idArgument)
    .addOption(new Option('--set <set>', 'which diagnostics').choices(['hit', 'miss', 'all']).default('hit'))
    .action(run((id: string, options: { set: 'hit' | 'miss' | 'all' }) => hits(context, id, options.set)));

  program
    .command('report')
    .description('Download the diagnostic report of a snapshot as PDF or CSV.')
    .argument(...idArgument)
    .addOption(new Option('--format <format>', 'report format').choices(['pdf', 'csv']).makeOptionMandatory())
    .requiredOption('--out <file>', 'where to write the report')
    .addOption(new Option('--set <set>', 'which diagnostics (default: all)').choices(['hit', 'miss', 'all']))
    .action(
      run((id: string, options: { format: 'pdf' | 'csv'; out: string; set?: 'hit' | 'miss' | 'all' }) => report(context, id, options)),
    );

  program
    .command('list')
    .description("List the account's snapshot ids (0 is the shared sample).")
    .action(run(() => list(context)));

  program
    .command('delete')
    .description('Delete one snapshot.')
    .argument(...idArgument)
    .action(run((id: string) => remove(context, id)));

  program
    .command('delete-all')
    .description("Delete all of the account's snapshots (the shared sample 0 stays).")
    .action(run(() => remove(context, undefined)));

  for (const command of program.commands) command.addHelpText('after', SETTINGS_HELP);
  return program;
}

/**
 * Runs one `portolan snapshot` command line (the arguments after `snapshot`) and resolves to its exit code:
 * 0 done, 1 failed, 2 usage or settings, 3 still processing when polling ran out. Settings and credentials
 * come from `io.env` only; nothing printed ever contains the password.
 *
 * @example
 * const code = await runSnapshotCommand(['upload', 'lb1.tgz', '--wait'], { env: process.env, stdout: process.stdout, stderr: process.stderr });
 */
export async function runSnapshotCommand(args: readonly string[], io: SnapshotIo): Promise<number> {
  // Defence in depth: the password is never put into a message, but a server could echo it back.
  const secrets = [io.env.PORTOLAN_DIAGNOSTICS_PASSWORD, io.env.PORTOLAN_ADMIN_PASSWORD].filter(
    (secret): secret is string => secret !== undefined && secret.length >= 4,
  );
  const redact = (text: string) => secrets.reduce((safe, secret) => safe.replaceAll(secret, '***'), text);
  const write = { out: (text: string) => void io.stdout.write(redact(text)), err: (text: string) => void io.stderr.write(redact(text)) };
  // A reader that closes the pipe early (`portolan snapshot hits 0 | head`) ends the output, not the command.
  for (const stream of [io.stdout, io.stderr]) if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  const context: Context = { io, out: (line) => write.out(`${line}\n`), sleep: io.sleep ?? ((ms) => delay(ms)) };
  let outcome: Outcome;
  try {
    await snapshotProgram(context, write, (result) => (outcome = result)).parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError)
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    write.err(`unexpected error (a bug, please report it): ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.failed;
  }
  if (outcome === undefined) return EXIT.ok;
  write.err(`${outcome.message}\n`);
  return outcome.code;
}

/**
 * The same command with its output captured: for tests, and for an end-to-end test of the real system
 * (point PORTOLAN_DIAGNOSTICS_URL and PORTOLAN_LOGIN_URL at its roles).
 *
 * @example
 * const { code, stdout } = await runSnapshotCli(['list'], { env: { PORTOLAN_DIAGNOSTICS_URL: url, PORTOLAN_LOGIN_URL: login, PORTOLAN_ADMIN_PASSWORD: pw } });
 */
export async function runSnapshotCli(
  args: readonly string[],
  options: { env: Record<string, string | undefined>; sleep?: (ms: number) => Promise<void> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const capture = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    });
    return { stream, text: () => text };
  };
  const [stdout, stderr] = [capture(), capture()];
  const code = await runSnapshotCommand(args, {
    env: options.env,
    stdout: stdout.stream,
    stderr: stderr.stream,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
