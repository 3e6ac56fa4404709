// `portolan users`: manage the users of the access profiles (the `admin` profile by default).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { loadConfig } from '../app/config.ts';
import { systemClock } from '../lib/clock.ts';
import { openDatabase } from '../stores/open-database.ts';
import type { Database } from '../stores/database.ts';
import { explainStartFailure } from './failures.ts';
import { ALL_MIGRATIONS } from '../app/modules.ts';
import { accountNameProblem, createAccountStore, passwordProblem } from '../accounts/account-store.ts';
import { ADMIN_PROFILE } from '../accounts/admin-bootstrap.ts';
import { portolanCommand, runCommandLine, usageError, type TextOut } from './usage.ts';

export type UsersIo = { env: Record<string, string | undefined>; stdin: Readable; stdout: Writable; stderr: Writable };

const AFTER_HELP = `
The password of add and passwd is read from PORTOLAN_USER_PASSWORD, or else from the first line of standard input.
The users are kept in the database PORTOLAN_DATABASE names (the one portolan start uses).

Examples:
  PORTOLAN_USER_PASSWORD=s3cret portolan users add ops
  echo 's3cret' | portolan users add --profile registration_check alice@example.com
  portolan users list`;

const PROFILE_HELP = `access profile (default: ${ADMIN_PROFILE}; client registration checks its users against PORTOLAN_REGISTRATION_ACCESS_PROFILE, default registration_check)`;

async function firstLine(stdin: Readable): Promise<string> {
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return '';
}

type Action = 'add' | 'passwd' | 'remove' | 'list';

/**
 * Runs one `users` subcommand; resolves to the exit code (0 done, 1 refused, 2 usage).
 *
 * @example
 * process.exitCode = await runUsersCommand(['list'], { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
 */
export async function runUsersCommand(args: readonly string[], io: UsersIo): Promise<number> {
  const out: TextOut = { stdout: (text) => void io.stdout.write(text), stderr: (text) => void io.stderr.write(text) };
  let code = 0;
  const program = portolanCommand('users', out)
    .description('Manage the users of the access profiles: the administrative account, and the users client registration checks.')
    .addHelpText('after', AFTER_HELP);
  const subcommand = (action: Action, summary: string) =>
    program
      .command(action)
      .description(summary)
      .option('--profile <name>', PROFILE_HELP)
      .action(async (...parsed: unknown[]) => {
        const username = action === 'list' ? undefined : (parsed[0] as string);
        const options = parsed[action === 'list' ? 0 : 1] as { profile?: string };
        code = await runAction(action, username, options.profile, io, out);
      });
  subcommand('add', 'Add a user (refused when it exists).').argument('<username>', 'the name the user logs in with');
  subcommand('passwd', "Change a user's password (refused when the user does not exist).").argument('<username>', 'the user');
  subcommand('remove', 'Remove a user.').argument('<username>', 'the user');
  subcommand('list', 'List the users (of every profile unless --profile is given); never shows passwords.');
  return runCommandLine(program, args, () => code);
}

async function runAction(action: Action, username: string | undefined, profileOption: string | undefined, io: UsersIo, out: TextOut) {
  const fail = (message: string) => {
    io.stderr.write(`${message}\n`);
    return 1;
  };
  const name = `users ${action}`;
  const profile = profileOption ?? (action === 'list' ? undefined : ADMIN_PROFILE);
  const problem =
    (profile === undefined ? undefined : accountNameProblem('profile', profile)) ??
    (username === undefined ? undefined : accountNameProblem('username', username));
  if (problem) return usageError(name, out, problem);

  let password = '';
  if (action === 'add' || action === 'passwd') {
    password = io.env.PORTOLAN_USER_PASSWORD ?? (await firstLine(io.stdin));
    const passwordIssue = passwordProblem(password);
    if (passwordIssue) return usageError(name, out, `${passwordIssue} (from PORTOLAN_USER_PASSWORD or the first line of standard input)`);
  }

  let database: Database;
  try {
    database = await openDatabase(loadConfig(io.env).database, { migrations: ALL_MIGRATIONS });
  } catch (error) {
    // A wrong setting, a database that cannot be opened: one line naming it, as `portolan start` says it.
    const line = explainStartFailure(error, io.env.PORTOLAN_DATABASE ?? '');
    if (line === undefined) throw error;
    return fail(line);
  }
  try {
    const accounts = createAccountStore(database, { clock: systemClock });
    const who = `user '${username}' in profile '${profile}'`;
    switch (action) {
      case 'add':
        if ((await accounts.add(profile!, username!, password)) === 'exists')
          return fail(`The ${who} already exists; use 'portolan users passwd' to change its password.`);
        io.stdout.write(`Added ${who}.\n`);
        return 0;
      case 'passwd':
        if (!(await accounts.has(profile!, username!))) return fail(`There is no ${who}; use 'portolan users add'.`);
        await accounts.setPassword(profile!, username!, password);
        io.stdout.write(`Changed the password of ${who}.\n`);
        return 0;
      case 'remove':
        if (!(await accounts.remove(profile!, username!))) return fail(`There is no ${who}.`);
        io.stdout.write(`Removed ${who}.\n`);
        return 0;
      default: {
        const users = await accounts.list(profile);
        for (const u of users) io.stdout.write(`${u.profile}\t${u.username}\tcreated ${u.createdAt}\n`);
        if (users.length === 0) io.stderr.write(profile === undefined ? 'No users.\n' : `No users in profile '${profile}'.\n`);
        return 0;
      }
    }
  } finally {
    await database.close();
  }
}
