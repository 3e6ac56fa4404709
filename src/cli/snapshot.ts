// `portolan snapshot`: the client of the snapshot diagnostics API, on the generated SDK. It finds the
// diagnostics and login roles from the settings of `portolan start` (or a running system's role map, or
// explicit URLs), logs in with credentials from the environment (never from the command line), then
// uploads a snapshot (streamed from disk, a progress bar on a terminal), waits for it with bounded
// polling, prints its hits, writes its report, lists and deletes. Results go to stdout (ids alone, or one
// JSON document with --json), messages and progress to stderr; every failure is one line naming what to fix.
// The commands are in snapshot-commands.ts, the session and its failures in snapshot-session.ts, the
// streamed upload and the progress in snapshot-upload.ts; this file is the command line.
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { portolanCommand, runCommandLine, usageError } from './usage.ts';
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
  type ReportOptions,
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
Where the diagnostics and login roles are (the first that applies, for each):
  PORTOLAN_DIAGNOSTICS_URL, PORTOLAN_LOGIN_URL
      set only to override what is found (another system, a proxy in between)
  --target <url>
      any role of a running Portolan system (e.g. http://127.0.0.1:8080): its role map
      (GET /.well-known/portolan) names the others
  the settings of \`portolan start\`, read the same way (environment, PORTOLAN_CONFIG file):
      PORTOLAN_HOST, PORTOLAN_PORT_OFFSET, PORTOLAN_DIAGNOSTICS_PORT, PORTOLAN_LOGIN_PORT
      (by default http://127.0.0.1:8300 and http://127.0.0.1:8301)

Credentials (environment variables only, never the command line):
  PORTOLAN_DIAGNOSTICS_USER, PORTOLAN_DIAGNOSTICS_PASSWORD
  (when neither is set: PORTOLAN_ADMIN_USER, default admin, and PORTOLAN_ADMIN_PASSWORD)

Output: results on stdout (upload: the id alone; --json: one JSON document), messages and progress on stderr.
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

function httpUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new InvalidArgumentError('must be an http or https URL.');
  if (url.username || url.password) throw new InvalidArgumentError('must not hold a user or password.');
  return value;
}

const pollOptions = (command: Command) =>
  command
    .addOption(
      new Option('--interval <seconds>', 'seconds between polls while the snapshot answers 202')
        .argParser(seconds)
        .default(DEFAULTS.intervalSeconds),
    )
    .addOption(new Option('--max-polls <count>', 'polls before giving up (exit 3)').argParser(count).default(DEFAULTS.maxPolls));

type Write = { out: (text: string) => void; err: (text: string) => void };

/** The command tree; each action hands its outcome (or a usage error's exit code) to `done`. */
function snapshotProgram(context: Context, write: Write, done: (outcome: Outcome | number) => void): Command {
  const columns = () => (context.io.stdout as { columns?: number }).columns ?? 100;
  const program = portolanCommand('snapshot', { stdout: write.out, stderr: write.err }, columns)
    .description('Client of the snapshot diagnostics API: upload device snapshots, wait for their processing, read their hits and reports.')
    .addOption(new Option('--target <url>', 'any role of a running Portolan system; its role map names the others').argParser(httpUrl))
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', SETTINGS_HELP);
  /** Runs an action with `--target` (given before or after the subcommand) in the context. */
  const run =
    <A extends unknown[]>(action: (...args: A) => Promise<Outcome | number>) =>
    async (...args: A) => {
      const command = args.at(-1) as Command;
      const target = (command.optsWithGlobals() as { target?: string }).target;
      if (target !== undefined) context.target = target;
      done(await action(...args));
    };
  const idArgument = ['<id>', 'snapshot id (0 is the shared sample)', snapshotId] as const;
  const json = (what: string) => new Option('--json', `print ${what} as one JSON document on stdout`);

  pollOptions(
    program
      .command('upload')
      .description('Upload a snapshot archive (streamed from disk; a progress bar on a terminal) and print its id alone on stdout.')
      .argument('<file>', 'the snapshot archive (gzip-compressed tar)')
      .option('--wait', 'then poll until it is processed (like `wait`)')
      .option('--description <text>', "set the snapshot's description after the upload")
      .addOption(json('{"id", "location"}, with --wait also "status", "polls" and "snapshot" (its record)')),
  ).action(
    run((file: string, options: { wait?: boolean; description?: string; json?: boolean } & PollOptions) => upload(context, file, options)),
  );

  pollOptions(
    program
      .command('wait')
      .description(
        'Poll a snapshot while it is processing (202) until it is ready (200), showing progress on stderr; exit 3 when polling runs out, 1 when processing failed.',
      )
      .argument(...idArgument)
      .addOption(json('{"id", "status" (ready, failed or processing), "polls", "snapshot", "messages"}')),
  ).action(run((id: string, options: PollOptions & { json?: boolean }) => wait(context, id, options)));

  program
    .command('hits')
    .description('Print the diagnostics of a processed snapshot as a table, most important first.')
    .argument(...idArgument)
    .addOption(new Option('--set <set>', 'which diagnostics').choices(['hit', 'miss', 'all']).default('hit'))
    .addOption(json('the diagnostics role\'s answer (diagnostics, system_information, version) with the snapshot\'s "id"'))
    .action(run((id: string, options: { set: 'hit' | 'miss' | 'all'; json?: boolean }) => hits(context, id, options)));

  program
    .command('report')
    .description('Download the diagnostic report of a snapshot as PDF or CSV: to a file with --out, else to stdout.')
    .argument(...idArgument)
    .addOption(new Option('--format <format>', 'report format').choices(['pdf', 'csv']).makeOptionMandatory())
    .option('--out <file>', 'where to write the report (default: stdout; a PDF is not written to a terminal)')
    .addOption(new Option('--set <set>', 'which diagnostics (default: all)').choices(['hit', 'miss', 'all']))
    .addOption(json('with --out: {"id", "format", "contentType", "bytes", "file"}'))
    .action(
      run(async (id: string, options: ReportOptions) => {
        if (options.json && options.out === undefined)
          return usageError(
            'snapshot report',
            { stdout: write.out, stderr: write.err },
            '--json needs --out <file> (without it, the report itself goes to stdout)',
          );
        if (options.out === undefined && options.format === 'pdf' && context.io.stdout.isTTY === true) {
          write.err(
            `portolan snapshot report: a PDF is not written to a terminal: add --out ${id}.pdf, or redirect stdout (> ${id}.pdf)\n`,
          );
          return EXIT.usage;
        }
        return report(context, id, options);
      }),
    );

  program
    .command('list')
    .description("List the account's snapshot ids, one a line (0 is the shared sample).")
    .addOption(json('{"ids": [...]}'))
    .action(run((options: { json?: boolean }) => list(context, options)));

  program
    .command('delete')
    .description('Delete one snapshot.')
    .argument(...idArgument)
    .addOption(json('{"deleted": [id]}'))
    .action(run((id: string, options: { json?: boolean }) => remove(context, id, options)));

  program
    .command('delete-all')
    .description("Delete all of the account's snapshots (the shared sample 0 stays).")
    .addOption(json('{"deleted": [ids]}'))
    .action(run((options: { json?: boolean }) => remove(context, undefined, options)));

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
  const context: Context = {
    io,
    out: (line) => write.out(`${line}\n`),
    err: (line) => write.err(`${line}\n`),
    sleep: io.sleep ?? ((ms) => delay(ms)),
  };
  let outcome: Outcome | number;
  try {
    const code = await runCommandLine(
      snapshotProgram(context, write, (result) => (outcome = result)),
      args,
      () => EXIT.ok,
    );
    if (code !== EXIT.ok) return code;
  } catch (error) {
    write.err(`unexpected error (a bug, please report it): ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.failed;
  }
  if (outcome === undefined) return EXIT.ok;
  if (typeof outcome === 'number') return outcome;
  write.err(`${outcome.message}\n`);
  return outcome.code;
}

/**
 * The same command with its output captured (stdout also as bytes: a report): for tests, and for an end-to-end test of the real system
 * (`--target` one of its roles, or point PORTOLAN_DIAGNOSTICS_URL and PORTOLAN_LOGIN_URL at them).
 *
 * @example
 * const { code, stdout } = await runSnapshotCli(['list', '--target', gatewayUrl], { env: { PORTOLAN_ADMIN_PASSWORD: pw } });
 */
export async function runSnapshotCli(
  args: readonly string[],
  options: { env: Record<string, string | undefined>; sleep?: (ms: number) => Promise<void> },
): Promise<{ code: number; stdout: string; stderr: string; stdoutBytes: Buffer }> {
  const capture = () => {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    return { stream, bytes: () => Buffer.concat(chunks) };
  };
  const [stdout, stderr] = [capture(), capture()];
  const code = await runSnapshotCommand(args, {
    env: options.env,
    stdout: stdout.stream,
    stderr: stderr.stream,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return { code, stdout: stdout.bytes().toString('utf8'), stderr: stderr.bytes().toString('utf8'), stdoutBytes: stdout.bytes() };
}
