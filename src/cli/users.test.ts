import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { tempSqliteUrl } from '../app/test-system.ts';
import { openDatabase } from '../stores/open-database.ts';
import { ALL_MIGRATIONS } from '../app/modules.ts';
import { createAccountStore } from '../accounts/account-store.ts';
import { createFakeClock } from '../lib/clock.ts';
import { runUsersCommand } from './users.ts';
import { findFreePorts } from '../lib/free-ports.ts';

const main = fileURLToPath(new URL('main.ts', import.meta.url));

/** The real command line, in a child process. */
async function spawned(env: Record<string, string>, args: string[], stdin = '') {
  const child = spawn(process.execPath, [main, 'users', ...args], { env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent', ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  child.stdin.end(stdin);
  const [code] = await once(child, 'exit');
  return { code, out, err };
}

/** The same command in this process (argument handling), much faster than a child. */
async function inProcess(env: Record<string, string>, args: string[], stdin = '') {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk));
  stderr.on('data', (chunk: Buffer) => (err += chunk));
  const code = await runUsersCommand(args, { env, stdin: Readable.from([stdin]), stdout, stderr });
  return { code, out, err };
}

t.test('users add, passwd, list and remove on the command line against a temporary store', async (t) => {
  const database = tempSqliteUrl(t).url;
  const env = { PORTOLAN_DATABASE: database };

  const added = await spawned({ ...env, PORTOLAN_USER_PASSWORD: 'from env' }, [
    'add',
    '--profile',
    'registration_check',
    'alice@example.com',
  ]);
  t.equal(added.code, 0, added.err);
  t.match(added.out, "Added user 'alice@example.com' in profile 'registration_check'.");

  const admin = await spawned(env, ['add', 'ops'], 'from stdin\nsecond line ignored\n');
  t.equal(admin.code, 0, admin.err);
  t.match(admin.out, "in profile 'admin'", 'the admin profile by default');

  const changed = await spawned(env, ['passwd', '--profile', 'registration_check', 'alice@example.com'], 'changed pw\n');
  t.equal(changed.code, 0, changed.err);

  const listed = await spawned(env, ['list']);
  t.equal(listed.code, 0);
  t.match(listed.out, /^admin\tops\tcreated \S+\nregistration_check\talice@example.com\tcreated \S+\n$/);
  t.notMatch(listed.out + listed.err, /from stdin|changed pw|scrypt/, 'no password or hash is shown');

  const db = await openDatabase(database, { migrations: ALL_MIGRATIONS });
  const accounts = createAccountStore(db, { clock: createFakeClock() });
  t.equal(await accounts.verify('registration_check', 'alice@example.com', 'changed pw'), 'allow', 'passwd replaced the password');
  t.equal(await accounts.verify('admin', 'ops', 'from stdin'), 'allow', 'the first line of stdin is the password');
  await db.close();

  const removed = await spawned(env, ['remove', 'ops']);
  t.equal(removed.code, 0);
  t.match(removed.out, "Removed user 'ops' in profile 'admin'.");
});

t.test('users refuses what it cannot do, in a clear sentence', async (t) => {
  const env = { PORTOLAN_DATABASE: tempSqliteUrl(t).url, PORTOLAN_USER_PASSWORD: 'pw' };
  t.equal((await inProcess(env, ['add', 'alice'])).code, 0);
  const again = await inProcess(env, ['add', 'alice']);
  t.equal(again.code, 1, 'adding an existing user is refused');
  t.match(again.err, /already exists; use 'portolan users passwd'/);
  const missing = await inProcess(env, ['passwd', 'nobody']);
  t.equal(missing.code, 1);
  t.match(missing.err, "There is no user 'nobody' in profile 'admin'; use 'portolan users add'.");
  const gone = await inProcess(env, ['remove', 'nobody']);
  t.equal(gone.code, 1);
  const empty = await inProcess(env, ['list', '--profile', 'registration_check']);
  t.equal(empty.out, '');
  t.match(empty.err, "No users in profile 'registration_check'.");
});

t.test('users refuses bad arguments with exit code 2: one line, then the pointer to --help', async (t) => {
  const env = { PORTOLAN_DATABASE: tempSqliteUrl(t).url, PORTOLAN_USER_PASSWORD: 'pw' };
  const cases: [string[], string, string][] = [
    [['frobnicate'], 'users', "unknown command 'frobnicate'"],
    [['add'], 'users add', "missing required argument 'username'"],
    [['add', 'a', 'b'], 'users add', "too many arguments for 'add'. Expected 1 argument but got 2: a, b."],
    [['list', 'extra'], 'users list', "too many arguments for 'list'. Expected 0 arguments but got 1: extra."],
    [['add', '--colour', 'x'], 'users add', "unknown option '--colour'"],
    [['add', '--profile'], 'users add', "option '--profile <name>' argument missing"],
  ];
  for (const [args, name, what] of cases) {
    const result = await inProcess(env, args);
    t.same(
      result,
      { code: 2, out: '', err: `portolan ${name}: ${what}\nRun 'portolan ${name} --help' for usage.\n` },
      `users ${args.join(' ')}`,
    );
  }
  const badName = await inProcess(env, ['add', 'bad:name']);
  t.equal(badName.code, 2);
  t.match(badName.err, /^portolan users add: username .+\nRun 'portolan users add --help' for usage\.\n$/);
  const noPassword = await inProcess({ PORTOLAN_DATABASE: env.PORTOLAN_DATABASE }, ['add', 'carol'], '');
  t.equal(noPassword.code, 2);
  t.match(noPassword.err, /password must be 1 to 1024 characters \(from PORTOLAN_USER_PASSWORD or the first line of standard input\)/);
});

t.test('users --help, and users alone, print the help on stdout', async (t) => {
  for (const args of [['--help'], []]) {
    const result = await inProcess({}, args);
    t.equal(result.code, 0);
    t.match(result.out, /^Usage: portolan users \[options\] \[command\]\n/);
    t.match(result.out, /PORTOLAN_USER_PASSWORD/, 'where the password comes from');
    t.equal(result.err, '');
  }
  const add = await inProcess({}, ['add', '--help']);
  t.match(add.out, /^Usage: portolan users add \[options\] <username>\n[\s\S]*--profile <name>/);
});

t.test('a database that cannot be opened is one line, without its password', async (t) => {
  const [port] = await findFreePorts(1);
  const result = await inProcess({ PORTOLAN_DATABASE: `postgres://app:hunter2@127.0.0.1:${port}/portolan` }, ['list']);
  t.equal(result.code, 1);
  t.match(
    result.err,
    new RegExp(`^Cannot open the database \\(PORTOLAN_DATABASE=postgres://app@127\\.0\\.0\\.1:${port}/portolan\\): .+\\n$`),
  );
  t.notMatch(result.err, 'hunter2');
});
