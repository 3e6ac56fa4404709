// `portolan start --workers N` for real: two worker processes on one SQLite store answer on the same ports,
// the banner is printed once, SIGTERM stops them all; and the starts that are refused in one line.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES } from '../lib/roles.ts';
import { tempSqliteUrl } from '../app/test-system.ts';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
// Every port left to the system: the primary picks them, once, for every worker.
const ephemeralPorts = Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0']));

/** Runs `portolan <args>` to its exit. */
async function run(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [main, ...args], { env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent', ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const [code] = await once(child, 'exit');
  return { code: code as number, out, err };
}

/** One GET on a connection of its own (node:cluster hands out connections, not requests, in turn): its status and body. */
const getAnswer = (url: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
const getOnce = async (url: string, headers?: Record<string, string>) => (await getAnswer(url, headers)).status;
const getBody = async (url: string, headers?: Record<string, string>) => (await getAnswer(url, headers)).body;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('two workers share every port on one SQLite store; the banner is printed once; SIGTERM stops them all', async (t) => {
  const { url, dir } = tempSqliteUrl(t);
  const env = {
    ...process.env,
    ...ephemeralPorts,
    PORTOLAN_DATABASE: url,
    // No rate-limit store named: the workers share a SQLite file beside the database (memory is one process's).
    PORTOLAN_LOG_LEVEL: 'info',
    PORTOLAN_LOG_FORMAT: 'json',
    PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
  };
  const child = spawn(process.execPath, [main, 'start', '--workers', '2'], { env });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  await new Promise<void>((resolve) => {
    child.stdout.on('data', () => out.includes('Press Ctrl-C') && resolve());
    child.on('exit', () => resolve());
  });
  t.equal(err, '', 'nothing on stderr');
  t.equal(out.match(/^Portolan is running in 2 worker processes\. Press Ctrl-C to stop it\.$/gm)?.length, 1, 'the banner, once');
  t.equal(out.match(/Generated the administrative password/g)?.length, 1, 'a generated password is announced once');
  const urls = Object.fromEntries([...out.matchAll(/^(\w+)\s+(http:\/\/\S+)/gm)].map((m) => [m[1], m[2]]));
  t.same(Object.keys(urls).sort(), [...ROLE_NAMES].sort(), 'a URL per role');
  // The role map names every role whichever worker answers it (worker 2 runs no device role).
  const maps = new Set<string>();
  for (let i = 0; i < 4; i++) {
    const body = await getBody(`${urls.gateway}/.well-known/portolan`);
    const map = JSON.parse(body) as { roles: { role: string; url: string }[] };
    t.same(Object.fromEntries(map.roles.map((r) => [r.role, r.url])), urls, 'the role map names every role at its URL');
    maps.add(body);
  }
  t.equal(maps.size, 1, "both workers' role maps are the same, the device role's interfaces included");

  // One token's requests through both workers count together: the default counters are shared.
  const bearer = { authorization: 'Bearer workers-start-token' };
  for (let i = 0; i < 4; i++) t.equal(await getOnce(`${urls.gateway}/api/charts`, bearer), 200);
  for (let i = 0; i < 2; i++) {
    const status = JSON.parse(await getBody(`${urls.gateway}/rate_limit_status`, bearer)) as Record<string, number>;
    t.equal(status['x-rate-limit-limit']! - status['x-rate-limit-remaining']!, 4, 'four requests counted, whichever worker asks');
  }
  for (let i = 0; i < 12; i++) {
    t.equal(await getOnce(`${urls.mapping}/no/such/path`), 404);
    t.equal(await getOnce(`${urls.device}/no/such/path`), 404);
  }
  // Each request's access line names the worker and the process that answered it.
  await new Promise((resolve) => setTimeout(resolve, 300)); // the access lines leave at least every 100 ms
  const lines = out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; worker?: number; pid?: number; role?: string; path?: string });
  const answered = (role: string) => {
    const byWorker = new Map<number, number>();
    for (const line of lines) {
      if (line.msg === 'request' && line.role === role && line.worker !== undefined) byWorker.set(line.worker, line.pid!);
    }
    return byWorker;
  };
  const mapping = answered('mapping');
  t.same([...mapping.keys()].sort(), [1, 2], 'both workers answered the mapping role on its one port');
  t.not(mapping.get(1), mapping.get(2), 'two processes');
  t.same([...answered('device').keys()], [1], 'the device role (its data plane binds its own ports) runs in worker 1 only');
  const pids = [...mapping.values()];
  t.ok(
    pids.every((pid) => pid !== child.pid),
    'the primary answers nothing itself',
  );

  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0, 'exit code 0');
  t.match(out, /Portolan stopped\./);
  t.same(
    pids.filter((pid) => alive(pid)),
    [],
    'no worker is left running',
  );
  t.ok(existsSync(join(dir, 'data', 'rate-limit.db')), 'the counters were kept in the SQLite file beside the database');
});

t.test('a connection the primary was handing to a worker as it died is closed, not left waiting', async (t) => {
  const { url } = tempSqliteUrl(t);
  const env = { ...process.env, ...ephemeralPorts, PORTOLAN_DATABASE: url, PORTOLAN_LOG_LEVEL: 'info', PORTOLAN_LOG_FORMAT: 'json' };
  const child = spawn(process.execPath, [main, 'start', '--workers', '2'], { env });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  const logged = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const look = () => {
        const line = out.split('\n').find((l) => l.includes(`"msg":"${msg}"`));
        if (line) resolve(JSON.parse(line) as Record<string, unknown>);
        else child.stdout.once('data', look);
      };
      look();
    });
  const pids = (await logged('every worker is running')).pids as Record<string, number>;
  const mapping = /^mapping\s+(http:\/\/\S+)/m.exec(out)![1]!;
  // Worker 2 stopped: the connection the primary hands it is never accepted; then it dies.
  process.kill(pids['2']!, 'SIGSTOP');
  const { port } = new URL(mapping);
  const settled: Promise<string>[] = [];
  for (let i = 0; i < 4; i++) {
    const socket = connect(Number(port), '127.0.0.1');
    socket.end('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk));
    socket.on('error', () => undefined); // a reset: closed
    settled.push(new Promise((resolve) => socket.on('close', () => resolve(answer.split('\r\n')[0] || 'closed'))));
  }
  const done = new Set<number>();
  let three: () => void = () => undefined;
  const answeredByWorker1 = new Promise<void>((resolve) => (three = resolve));
  settled.forEach((p, i) => void p.then(() => done.add(i) && done.size === 3 && three()));
  // The primary hands one connection at a time to each worker: the one handed to worker 2 waits, the others
  // are answered by worker 1.
  await answeredByWorker1;
  t.equal(done.size, 3, 'one connection waits for the stopped worker');
  process.kill(pids['2']!, 'SIGKILL');
  await logged('worker restarted');
  t.same([...done].sort(), [0, 1, 2, 3], 'by the time worker 2 runs again, every connection was answered or closed');
  const ends = await Promise.all(settled.filter((_, i) => done.has(i)));
  t.same(
    ends.filter((end) => end === 'closed'),
    ['closed'],
    'the one handed to the dead worker was closed, the others answered',
  );
});

t.test('more than one worker with rate-limit counters set to memory is refused in one line, exit 2', async (t) => {
  const { url } = tempSqliteUrl(t);
  const { code, err, out } = await run(['start', '--workers', '2'], {
    ...ephemeralPorts,
    PORTOLAN_DATABASE: url,
    PORTOLAN_RATE_LIMIT_STORE: 'memory',
  });
  t.equal(code, 2);
  t.equal(err.split('\n').filter(Boolean).length, 1, 'one line');
  t.match(err, /PORTOLAN_RATE_LIMIT_STORE is memory/);
  t.equal(out, '', 'nothing started');
});

t.test('--workers takes 1 to 256 or auto; anything else is a usage error', async (t) => {
  const { code, err } = await run(['start', '--workers', '0'], {});
  t.equal(code, 2);
  t.match(err, /^portolan start: option '--workers <count>' argument '0' is invalid\. use a whole number from 1 to 256, or auto\./);
  const help = await run(['start', '--help'], {});
  t.match(help.out, /--workers <count>/);
  t.match(help.out, /PORTOLAN_WORKERS/);
});
