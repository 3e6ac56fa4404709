import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { findFreePorts } from '../lib/free-ports.ts';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES } from '../lib/roles.ts';
import { INTERFACES } from '../lib/spec-catalog.ts';
import { ALL_MIGRATIONS } from '../app/modules.ts';
import { runPortolan } from './commands.ts';
import { tempSqliteUrl } from '../app/test-system.ts';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
const ephemeralPorts = Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0']));

t.test('start serves every role, prints each URL, and stops cleanly on SIGTERM', async (t) => {
  const env = {
    ...process.env,
    ...ephemeralPorts,
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_DATABASE: tempSqliteUrl(t).url,
    PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
  };
  const child = spawn(process.execPath, [main, 'start'], { env });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  // Until the banner is out, or the child has exited (then the checks below say what is missing).
  await new Promise<void>((resolve) => {
    child.stdout.on('data', () => out.includes('Portolan is running') && resolve());
    child.on('exit', () => resolve());
  });
  const urls = Object.fromEntries([...out.matchAll(/^(\w+)\s+(http:\/\/\S+)/gm)].map((m) => [m[1], m[2]]));
  t.same(Object.keys(urls).sort(), [...ROLE_NAMES].sort(), 'a URL per role');
  for (const role of ROLE_NAMES) {
    const response = await fetch(`${urls[role]}/no/such/path`);
    t.equal(response.status, 404, `${role} answers over HTTP`);
    await response.arrayBuffer();
    t.match(out, new RegExp(`^${role} +${urls[role]} +docs: ${urls[role]}/docs$`, 'm'), `the banner links ${role}'s reference pages`);
    const docs = await fetch(`${urls[role]}/docs`);
    t.equal(docs.status, 200, `${role}'s /docs answers`);
    await docs.arrayBuffer();
  }
  t.match(out, /^Portolan is running\. Press Ctrl-C to stop it\.$/m, 'the banner says how to stop');
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0, 'exit code 0');
  t.match(out, /Portolan stopped/);
});

t.test('start --help lists every setting', async (t) => {
  const child = spawn(process.execPath, [main, 'start', '--help']);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  await once(child, 'exit');
  for (const name of ['PORTOLAN_HOST', 'PORTOLAN_GATEWAY_PORT', 'PORTOLAN_BODY_LIMIT', 'PORTOLAN_LOG_LEVEL']) t.match(out, name);
});

t.test('a wrong setting stops the start with a clear message and exit code 2', async (t) => {
  const child = spawn(process.execPath, [main, 'start'], { env: { ...process.env, PORTOLAN_MAPPING_PORT: 'abc' } });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const [code] = await once(child, 'exit');
  t.equal(code, 2);
  t.match(err, /PORTOLAN_MAPPING_PORT must be integer, got 'abc'/);
});

/** Runs `portolan <args>` to its exit; answers its code and both outputs. */
async function run(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const child = spawn(process.execPath, [main, ...args], {
    env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent', ...env },
    ...(cwd ? { cwd } : {}),
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const [code] = await once(child, 'exit');
  return { code: code as number, out, err };
}

t.test('a port in use stops the start with one line naming the role and the setting, before anything is written', async (t) => {
  const dir = t.testdir({});
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  const taken = (holder.address() as AddressInfo).port;
  const { code, out, err } = await run(
    ['start'],
    {
      ...ephemeralPorts,
      PORTOLAN_CENTRAL_PORT: String(taken),
      PORTOLAN_DATABASE: `sqlite:${join(dir, 'p.db')}`,
      PORTOLAN_LOG_LEVEL: 'info',
    },
    dir,
  );
  t.equal(code, 2);
  t.equal(
    err,
    `The central role cannot listen on 127.0.0.1:${taken}: the port is in use. Stop what uses it, or set PORTOLAN_CENTRAL_PORT to another port (0 picks a free one).\n`,
  );
  t.equal(out, '', 'no migration log line, no generated password');
  t.same(readdirSync(dir), [], 'no database file was created');
});

t.test('two roles on one port: one line before anything is written', async (t) => {
  const dir = t.testdir({});
  const [port] = await findFreePorts(1);
  const { code, err } = await run(
    ['start'],
    {
      ...ephemeralPorts,
      PORTOLAN_MAPPING_PORT: String(port),
      PORTOLAN_LOGIN_PORT: String(port),
      PORTOLAN_DATABASE: `sqlite:${join(dir, 'p.db')}`,
    },
    dir,
  );
  t.equal(code, 2);
  t.equal(err, `The mapping and login roles are both set to port ${port}. Set PORTOLAN_LOGIN_PORT to another port.\n`);
  t.same(readdirSync(dir), []);
});

t.test('PostgreSQL refusing the connection is one line naming PORTOLAN_DATABASE, without its password', async (t) => {
  const [port] = await findFreePorts(1);
  const { code, err } = await run(['start'], {
    ...ephemeralPorts,
    PORTOLAN_DATABASE: `postgres://app:s3cret-pw@127.0.0.1:${port}/portolan`,
  });
  t.equal(code, 2);
  t.equal(err.trim().split('\n').length, 1, 'one line');
  t.match(err, `Cannot open the database (PORTOLAN_DATABASE=postgres://app@127.0.0.1:${port}/portolan)`);
  t.match(err, /is PostgreSQL running/);
  t.notMatch(err, /s3cret-pw|\n\s+at /, 'no password, no stack trace');
});

/** Runs `portolan <args>` in this process (commands that parse and print, and start nothing): code and both outputs. */
async function inProcess(args: string[]) {
  let out = '';
  let err = '';
  const stream = (add: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        add(String(chunk));
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  const code = await runPortolan(args, {
    stdout: stream((text) => (out += text)),
    stderr: stream((text) => (err += text)),
    stdin: process.stdin,
    env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent' },
  });
  return { code, out, err };
}

t.test('a usage error is one line and the pointer to --help, exit 2; --help works on every command', async (t) => {
  const run = inProcess;
  const usage = (name: string, what: string) =>
    `portolan${name ? ` ${name}` : ''}: ${what}\nRun 'portolan${name ? ` ${name}` : ''} --help' for usage.\n`;
  t.same(await run(['strat']), { code: 2, out: '', err: usage('', "unknown command 'strat' (Did you mean start?)") });
  t.same(await run(['--bogus']), { code: 2, out: '', err: usage('', "unknown option '--bogus'") });
  t.same(await run(['help', 'strat']), { code: 2, out: '', err: usage('', "unknown command 'strat'") });
  t.same(await run(['start', '--bogus']), { code: 2, out: '', err: usage('start', "unknown option '--bogus'") });
  t.same(await run(['start', 'now']), {
    code: 2,
    out: '',
    err: usage('start', "too many arguments for 'start'. Expected 0 arguments but got 1: now."),
  });
  t.same(await run(['generate', '--wacth']), {
    code: 2,
    out: '',
    err: usage('generate', "unknown option '--wacth' (Did you mean --watch?)"),
  });
  t.same(await run(['generate', 'nosuch']), {
    code: 2,
    out: '',
    err: usage('generate', `unknown interface 'nosuch'; known: ${INTERFACES.map((i) => i.name).join(', ')}`),
  });
  t.same(await run(['users', 'ad', 'x']), { code: 2, out: '', err: usage('users', "unknown command 'ad' (Did you mean add?)") });
  t.same(await run(['users', 'add']), { code: 2, out: '', err: usage('users add', "missing required argument 'username'") });
  for (const command of ['start', 'mock', 'conformance', 'spec-diff', 'generate', 'users', 'snapshot', 'haproxy-config']) {
    for (const args of [
      [command, '--help'],
      ['help', command],
    ]) {
      const help = await run(args);
      t.equal(help.code, 0, `portolan ${args.join(' ')} exits 0`);
      t.match(help.out, new RegExp(`^Usage: portolan ${command} `), `portolan ${args.join(' ')}: commander's layout on stdout`);
      t.equal(help.err, '', `portolan ${args.join(' ')} writes nothing on stderr`);
    }
    const wrong = await run([command, '--no-such-option']);
    t.same(
      { code: wrong.code, err: wrong.err },
      { code: 2, err: usage(command, "unknown option '--no-such-option'") },
      `portolan ${command} --no-such-option: one line and the pointer`,
    );
  }
});

t.test('--version and -V print the version of package.json', async (t) => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  t.same(await run(['--version']), { code: 0, out: `${version}\n`, err: '' });
  t.same(await run(['-V']), { code: 0, out: `${version}\n`, err: '' });
});

t.test('portolan alone prints its help on stdout, listing every command', async (t) => {
  const { code, out, err } = await run([]);
  t.equal(code, 0);
  t.equal(err, '');
  t.match(out, /^Usage: portolan \[options\] \[command\]\n/);
  for (const command of ['start', 'mock', 'conformance', 'spec-diff', 'generate', 'users', 'snapshot'])
    t.match(out, new RegExp(`\n  ${command} +\\S`), `lists ${command}`);
  t.match(out, /-V, --version/);
});

t.test(
  'logs: one line per request at info (JSON lines off a terminal, their shape unchanged; one readable line with PORTOLAN_LOG_FORMAT=pretty), the database one line, healthy probes at debug',
  async (t) => {
    const startAndStop = async (format: string) => {
      const env = {
        ...process.env,
        ...ephemeralPorts,
        PORTOLAN_ROLES: 'mapping',
        PORTOLAN_LOG_LEVEL: 'info',
        PORTOLAN_LOG_FORMAT: format,
        PORTOLAN_DATABASE: tempSqliteUrl(t).url,
        PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
        PORTOLAN_ADMIN_PASSWORD: 'x',
      };
      const child = spawn(process.execPath, [main, 'start'], { env });
      t.teardown(() => child.kill('SIGKILL'));
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk));
      while (!out.includes('Portolan is running')) await once(child.stdout, 'data');
      const url = /^mapping\s+(http:\/\/\S+)/m.exec(out)![1]!;
      await (await fetch(`${url}/health`)).arrayBuffer();
      await (await fetch(`${url}/no/such/path?token=s3cret-query`)).arrayBuffer();
      child.kill('SIGTERM');
      await once(child, 'exit');
      return out.split('\n').filter(Boolean);
    };
    const json = await startAndStop('auto');
    const records = json.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = records.filter((r) => r.msg === 'request');
    t.same(
      requests.map((r) => r.status),
      [404],
      'JSON lines (stdout is a pipe here): the 404 is logged at info; the healthy /health probe is not',
    );
    t.same(
      Object.keys(requests[0] ?? {}),
      ['level', 'time', 'pid', 'hostname', 'name', 'role', 'requestId', 'method', 'status', 'ms', 'msg'],
      "an access line's fields, as before",
    );
    const databaseLine = `database ready: ${ALL_MIGRATIONS.length} migrations applied`;
    t.same(
      records.filter((r) => /database|migration/.test(String(r.msg))).map((r) => r.msg),
      [databaseLine],
      'one database line for the whole schema',
    );

    const pretty = await startAndStop('pretty');
    const before = pretty.slice(
      0,
      pretty.findIndex((line) => line.startsWith('mapping ')),
    );
    t.same(
      before.filter((line) => /database|migration/.test(line)).map((line) => line.replace(/^\[[\d:.]+\] /, '').replace(/ \{.*$/, '')),
      [`INFO: ${databaseLine}`],
      'before the banner: one database line',
    );
    const access = pretty.filter((line) => line.includes(' id='));
    t.equal(access.length, 1, 'one line for the one request logged at info');
    t.match(
      access[0],
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: mapping GET \/no\/such\/path 404 \d+(\.\d+)? ms id=[\w-]+$/,
      'time, level, role, method, path (without its query), status, ms, request id',
    );
    t.notOk(
      pretty.some((line) => line.startsWith('{') || line.startsWith(' ')),
      'every record on one line: no JSON line, no indented continuation',
    );
    t.notMatch(pretty.join('\n'), 's3cret-query', 'no query string in the log');
  },
);

t.test('an address the machine does not have stops the start in one line before anything is written, even with every port 0', async (t) => {
  const dir = t.testdir({});
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
  const { code, out, err } = await run(
    ['start'],
    { ...ephemeralPorts, PORTOLAN_HOST: '192.0.2.1', PORTOLAN_DATABASE: `sqlite:${join(dir, 'p.db')}`, PORTOLAN_LOG_LEVEL: 'info' },
    dir,
  );
  t.equal(code, 2);
  t.match(
    err,
    /^The \w+ role cannot listen on 192\.0\.2\.1: this machine has no such address\. Set PORTOLAN_HOST to one of its addresses \(127\.0\.0\.1 or 0\.0\.0\.0\)\.\n$/,
  );
  t.equal(out, '');
  t.same(readdirSync(dir), []);
});
