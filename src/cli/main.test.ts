import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { findFreePorts } from '../lib/free-ports.ts';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES } from '../lib/roles.ts';
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
  }
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

t.test('usage errors are one line and exit 2; --help works on every command', async (t) => {
  const unknown = await run(['strat']);
  t.equal(unknown.code, 2);
  t.match(unknown.err, /^error: unknown command 'strat'\n\(Did you mean start\?\)\n$/);
  const flag = await run(['start', '--bogus']);
  t.equal(flag.code, 2);
  t.equal(flag.err, "error: unknown option '--bogus'\n");
  for (const command of ['start', 'mock', 'conformance', 'spec-diff', 'generate', 'users', 'snapshot']) {
    const help = await run([command, '--help']);
    t.equal(help.code, 0, `${command} --help exits 0`);
    t.match(help.out, /usage/i, `${command} --help prints a usage`);
    t.equal(help.err, '', `${command} --help writes nothing on stderr`);
  }
});

t.test(
  'logs are JSON lines when stdout is not a terminal, readable lines with PORTOLAN_LOG_FORMAT=pretty; healthy probes at debug',
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
      await (await fetch(`${url}/no/such/path`)).arrayBuffer();
      child.kill('SIGTERM');
      await once(child, 'exit');
      return out.split('\n').filter((line) => /database opened|"msg":"request"|INFO.*request|DEBUG/.test(line));
    };
    const json = await startAndStop('auto');
    t.ok(json.length >= 2 && json.every((line) => JSON.parse(line).msg), 'JSON lines (stdout is a pipe here)');
    t.same(
      json.filter((line) => line.includes('"request"')).map((line) => JSON.parse(line).status),
      [404],
      'the 404 is logged at info; the healthy /health probe is not',
    );
    const pretty = await startAndStop('pretty');
    t.ok(pretty.length >= 2, 'the same lines');
    t.match(pretty.join('\n'), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: database opened/m, 'a readable line: time, level, message');
    t.notOk(
      pretty.some((line) => line.startsWith('{')),
      'no JSON line',
    );
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

t.test('portolan with no command prints its usage on stderr and exits 2', async (t) => {
  const { code, err } = await run([]);
  t.equal(code, 2);
  t.match(err, /^Usage: portolan \[options\] \[command\]/);
});
