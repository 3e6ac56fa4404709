// `portolan users`: manage the users of the access profiles (the `admin` profile by default).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { loadConfig } from '../app/config.ts';
import { systemClock } from '../lib/clock.ts';
import { openDatabase } from '../stores/open-database.ts';
import { ALL_MIGRATIONS } from '../app/modules.ts';
import { accountNameProblem, createAccountStore, passwordProblem } from '../accounts/account-store.ts';
import { ADMIN_PROFILE } from '../accounts/admin-bootstrap.ts';

export const USERS_USAGE = `Usage: portolan users <add|passwd|remove|list> [--profile <name>] [<username>]

  add <username>      Add a user (fails when it exists).
  passwd <username>   Change a user's password (fails when it does not exist).
  remove <username>   Remove a user.
  list                List users (of every profile unless --profile is given); never shows passwords.

  --profile <name>    Access profile (default: ${ADMIN_PROFILE}; registration checks its users
                      against PORTOLAN_REGISTRATION_ACCESS_PROFILE, default registration_check).

The password is read from PORTOLAN_USER_PASSWORD, or else from the first line of standard input.
The store is the one PORTOLAN_DATABASE names.`;

export type UsersIo = { env: Record<string, string | undefined>; stdin: Readable; stdout: Writable; stderr: Writable };

async function firstLine(stdin: Readable): Promise<string> {
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return '';
}

/** Runs one `users` subcommand; resolves to the exit code (0 done, 1 refused, 2 usage or settings). */
export async function runUsersCommand(args: readonly string[], io: UsersIo): Promise<number> {
  const fail = (message: string, code = 1) => {
    io.stderr.write(`${message}\n`);
    return code;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { profile: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${USERS_USAGE}`, 2);
  }
  const [action, username, ...extra] = parsed.positionals;
  if (parsed.values.help) {
    io.stdout.write(`${USERS_USAGE}\n`);
    return 0;
  }
  const needsUser = action === 'add' || action === 'passwd' || action === 'remove';
  if (!needsUser && action !== 'list')
    return fail(`${action ? `Unknown users command '${action}'.` : 'Missing users command.'}\n\n${USERS_USAGE}`, 2);
  if (needsUser ? username === undefined || extra.length > 0 : username !== undefined)
    return fail(`Wrong arguments for 'users ${action}'.\n\n${USERS_USAGE}`, 2);
  const profile = parsed.values.profile ?? (action === 'list' ? undefined : ADMIN_PROFILE);
  const problem =
    (profile === undefined ? undefined : accountNameProblem('profile', profile)) ??
    (needsUser ? accountNameProblem('username', username!) : undefined);
  if (problem) return fail(problem, 2);

  let password = '';
  if (action === 'add' || action === 'passwd') {
    password = io.env.PORTOLAN_USER_PASSWORD ?? (await firstLine(io.stdin));
    const passwordIssue = passwordProblem(password);
    if (passwordIssue) return fail(`${passwordIssue} (from PORTOLAN_USER_PASSWORD or the first line of standard input)`, 2);
  }

  const config = loadConfig(io.env);
  const database = await openDatabase(config.database, { migrations: ALL_MIGRATIONS });
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
