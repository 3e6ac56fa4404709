import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '../src/lib/free-ports.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import type { TapTest } from '../src/lib/tap-test.ts';
import { listenFailureLine, runMockCommand } from './cli.ts';
import { portSettingOf, resolveMockPorts } from './mock-ports.ts';
import { MOCK_PORT_SHIFT } from './prism-plan.ts';
import { MockListenError } from './prism-mocks.ts';

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
// Every port a test listens on is one the OS has just handed out (findFreePorts or port 0), never one of
// the 9xxx mock ports or a port some other program may use: an offset is derived from a reserved port, and
// the roles not under test get PORTOLAN_<ROLE>_PORT=0.
const mockPortOf = (role: RoleName) => ROLE_DEFINITIONS[role].defaultPort + MOCK_PORT_SHIFT;
/** The settings that put every role except `except` on a free port of the OS's choosing. */
const othersOnFreePorts = (...except: RoleName[]) =>
  Object.fromEntries(ROLE_NAMES.filter((role) => !except.includes(role)).map((role) => [portSettingOf(role), '0']));
/** A --port-offset that puts `role` on a port reserved just now, and that port. */
async function offsetOnto(role: RoleName): Promise<{ offset: number; port: number }> {
  const [port] = await findFreePorts(1);
  return { offset: port! - mockPortOf(role), port: port! };
}
/** Every role on its own port reserved just now, as settings, and those ports. */
async function everyRoleOnFreePorts(): Promise<{ env: Record<string, string>; ports: Record<RoleName, number> }> {
  const reserved = await findFreePorts(ROLE_NAMES.length);
  const ports = Object.fromEntries(ROLE_NAMES.map((role, i) => [role, reserved[i]!])) as Record<RoleName, number>;
  return { env: Object.fromEntries(ROLE_NAMES.map((role) => [portSettingOf(role), String(ports[role])])), ports };
}
/** Anything a person would read as a failure. */
const ERRORISH = /error|fail|warn|violation|exception|cannot/i;

/** Runs `runMockCommand` in this process; `ready` settles once it prints its ready line (or ends). */
function runInProcess(t: TapTest, argv: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const controller = new AbortController();
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const exited = runMockCommand(argv, {
    stdout: (s) => {
      out.push(...s.trimEnd().split('\n'));
      if (s.includes('Ctrl-C stops it')) markReady();
    },
    stderr: (s) => err.push(...s.trimEnd().split('\n')),
    env,
    signal: controller.signal,
  });
  void exited.then(markReady);
  t.teardown(async () => {
    controller.abort();
    await exited;
  });
  return { out, err, ready, exited, stop: () => controller.abort() };
}

/** The URL the table prints for a role. */
const urlOf = (lines: string[], role: string) => lines.find((line) => line.startsWith(`${role} `))?.split(/\s+/)[1];

/** Another program's listener on a free loopback port; closed by `release()` (tests that count listeners) or at teardown. */
async function occupy(t: TapTest): Promise<{ port: number; release(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.end('not a mock'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  t.teardown(release);
  return { port: (server.address() as AddressInfo).port, release };
}

const refuses = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health`).then(
    () => false,
    () => true,
  );
const listeners = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
/**
 * The number of listeners once closing ones are gone: a closed server's handle is released in the close
 * phase of a later event-loop turn, so this waits a few turns (not a time) for the count to reach `expected`
 * (all the turns when none is expected: a baseline).
 */
async function listenersSettled(expected?: number): Promise<number> {
  for (let turn = 0; turn < 20 && listeners() !== expected; turn++) await new Promise((resolve) => setImmediate(resolve));
  return listeners();
}

t.test('--help lists the interfaces, the role ports and the port settings', async (t) => {
  const run = runInProcess(t, ['--help']);
  t.equal(await run.exited, 0);
  const text = run.out.join('\n');
  t.match(text, /gateway 9080, mapping 9081, device 9100, central 9200, diagnostics 9300, login 9301/);
  t.match(text, /PORTOLAN_GATEWAY_PORT, PORTOLAN_MAPPING_PORT, .*PORTOLAN_LOGIN_PORT/);
  t.match(text, /--port-offset -1500/);
});

t.test('an unknown interface is refused in one line with the known ones', async (t) => {
  const run = runInProcess(t, ['maping']);
  t.equal(await run.exited, 2);
  t.same(run.err, [
    'Unknown interface maping; known: mapping, topology, snapshots, client-registration, rate-limit, device-config, health, access-session. (--help lists the options)',
  ]);
});

t.test('a port offset that leaves the port range names the first role out of range and the flag', async (t) => {
  const run = runInProcess(t, ['--port-offset', '60000']);
  t.equal(await run.exited, 2);
  t.same(run.err, [
    "The gateway mock's port 9080 + 60000 = 69080 is outside 1..65535: change --port-offset, or set PORTOLAN_GATEWAY_PORT.",
  ]);
  const low = runInProcess(t, ['device-config', '--port-offset', '-9100']);
  t.equal(await low.exited, 2);
  t.same(low.err, ["The device mock's port 9100 - 9100 = 0 is outside 1..65535: change --port-offset, or set PORTOLAN_DEVICE_PORT."]);
});

t.test('a port setting that is not a port is refused in one line naming it', async (t) => {
  const run = runInProcess(t, ['mapping'], { PORTOLAN_MAPPING_PORT: '80a' });
  t.equal(await run.exited, 2);
  t.same(run.err, ["PORTOLAN_MAPPING_PORT must be a port number from 0 to 65535 (0 picks a free port), got '80a'."]);
});

t.test('a negative port offset moves every role down (worked out, not bound: such ports are not ours to take)', async (t) => {
  const ports = resolveMockPorts(['gateway', 'login'], -1500, { PORTOLAN_LOGIN_PORT: '0' });
  t.same(ports, {
    ok: true,
    value: {
      gateway: { port: 7580, from: 'offset', setting: 'PORTOLAN_GATEWAY_PORT' },
      login: { port: 0, from: 'setting', setting: 'PORTOLAN_LOGIN_PORT' },
    },
  });
});

t.test('a port offset moves the roles; a port setting wins over it for its role', async (t) => {
  const gateway = await offsetOnto('gateway');
  const run = runInProcess(t, ['mapping', 'health', '--port-offset', String(gateway.offset)], othersOnFreePorts('gateway'));
  await run.ready;
  t.same(run.err, []);
  t.equal(urlOf(run.out, 'gateway'), `http://127.0.0.1:${gateway.port}`, 'the gateway moved by the offset');
  const mapping = urlOf(run.out, 'mapping')!;
  t.not(
    mapping,
    `http://127.0.0.1:${mockPortOf('mapping') + gateway.offset}`,
    'the mapping role took its setting (0: a free port), not the offset',
  );
  const response = await fetch(`${mapping}/api/charts`);
  t.equal(response.status, 200);
  t.match(await response.json(), { status: 'success' });
  run.stop();
  t.equal(await run.exited, 0);
});

t.test('an explicit port setting is used as given', async (t) => {
  const [free] = await findFreePorts(1);
  const run = runInProcess(t, ['health'], { ...othersOnFreePorts('central'), PORTOLAN_CENTRAL_PORT: String(free) });
  await run.ready;
  t.equal(urlOf(run.out, 'central'), `http://127.0.0.1:${free}`);
  const response = await fetch(`http://127.0.0.1:${free}/health`);
  t.equal(response.status, 200);
  await response.body?.cancel();
  run.stop();
  t.equal(await run.exited, 0);
});

t.test('a role port in use is one line naming the role, the port and the setting, exit 2; nothing stays listening', async (t) => {
  const { port: taken } = await occupy(t);
  const gateway = await offsetOnto('gateway');
  const before = await listenersSettled();
  const run = runInProcess(t, ['health', '--port-offset', String(gateway.offset)], {
    ...othersOnFreePorts('gateway', 'mapping'),
    PORTOLAN_MAPPING_PORT: String(taken),
  });
  t.equal(await run.exited, 2, 'a person fixes it: exit 2, as portolan start');
  t.same(run.err, [
    `The mapping role cannot listen on 127.0.0.1:${taken}: the port is in use. Stop what uses it, or set PORTOLAN_MAPPING_PORT to another port (0 picks a free one).`,
  ]);
  t.same(run.out, []);
  t.equal(await listenersSettled(before), before, 'the gateway front and the Prism servers started before are closed');
  t.ok(await refuses(gateway.port), 'the gateway port is free again');
});

t.test('a role port in use because of the offset also says to change the offset, exit 2', async (t) => {
  const { port: taken } = await occupy(t);
  const run = runInProcess(t, ['mapping', '--port-offset', String(taken - mockPortOf('mapping'))], othersOnFreePorts('mapping'));
  t.equal(await run.exited, 2);
  t.same(run.err, [
    `The mapping role cannot listen on 127.0.0.1:${taken}: the port is in use. Stop what uses it, or set PORTOLAN_MAPPING_PORT to another port (0 picks a free one). Or change --port-offset (it moves every role).`,
  ]);
});

t.test("an address that is not this machine's is one line naming --host, exit 2", async (t) => {
  const run = runInProcess(t, ['health', '--host', '192.0.2.1'], othersOnFreePorts()); // TEST-NET-1: never local
  t.equal(await run.exited, 2);
  t.same(run.err, [
    'The gateway role cannot listen on 192.0.2.1: this machine has no such address. Set --host to one of its addresses (127.0.0.1 or 0.0.0.0).',
  ]);
});

t.test(
  "every listen failure is the line portolan start gives, with the mock's flags: a privileged port names the port, not --host",
  async (t) => {
    const failure = (code: string, port: number) =>
      new MockListenError('device', '127.0.0.1', port, Object.assign(new Error(code), { code }));
    const fromSetting = { port: 80, from: 'setting', setting: 'PORTOLAN_DEVICE_PORT' } as const;
    const fromOffset = { port: 80, from: 'offset', setting: 'PORTOLAN_DEVICE_PORT' } as const;
    t.equal(
      listenFailureLine(failure('EACCES', 80), fromSetting),
      'The device role may not listen on 127.0.0.1:80 (ports below 1024 need privileges). Set PORTOLAN_DEVICE_PORT to a port above 1023.',
    );
    t.equal(
      listenFailureLine(failure('EACCES', 80), fromOffset),
      'The device role may not listen on 127.0.0.1:80 (ports below 1024 need privileges). Set PORTOLAN_DEVICE_PORT to a port above 1023. Or change --port-offset (it moves every role).',
    );
    t.equal(
      listenFailureLine(failure('EMFILE', 80), fromSetting),
      'The device role cannot listen on 127.0.0.1:80 (EMFILE). Check PORTOLAN_DEVICE_PORT and --host.',
    );
    t.notMatch(listenFailureLine(failure('EACCES', 80), fromSetting), /PORTOLAN_HOST/);
  },
);

t.test('in this process: every role answers, the start prints only the table, and a stop closes every port', async (t) => {
  const { env, ports } = await everyRoleOnFreePorts();
  const before = await listenersSettled();
  const run = runInProcess(t, [], env);
  await run.ready;
  t.same(run.err, [], 'nothing on stderr');
  t.equal(run.out.length, ROLE_NAMES.length + 1, `one line per role and the ready line:\n${run.out.join('\n')}`);
  t.notMatch(run.out.join('\n'), ERRORISH);
  t.equal(run.out.at(-1), 'Prism mocks (named examples) are running in one process. Ctrl-C stops it.');
  for (const role of ROLE_NAMES) {
    t.equal(urlOf(run.out, role), `http://127.0.0.1:${ports[role]}`, `${role} on its setting`);
    const response = await fetch(`${urlOf(run.out, role)}/health`);
    t.equal(response.status, 200, `${role} answers GET /health`);
    await response.body?.cancel();
  }
  t.same(run.err, [], 'still nothing on stderr after a request to every role');
  run.stop();
  t.equal(await run.exited, 0);
  t.same(run.out.slice(-2), ['Stop requested: stopping the mocks.', 'Prism mocks stopped.']);
  t.equal(await listenersSettled(before), before, 'no listener left');
});

/** `npm run mock`'s CLI as a child on free ports, once it has printed its ready line (or ended). */
async function startMockChild(t: TapTest) {
  const { env, ports } = await everyRoleOnFreePorts();
  const child = spawn(process.execPath, [CLI], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const out: string[] = [];
  const err: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => err.push(line));
  const ready = await new Promise<boolean>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      out.push(line);
      if (line.includes('Ctrl-C stops it')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  return { child, exited, out, err, ports, ready };
}

t.test('npm run mock: one process with no children serves every role, and SIGTERM stops it with exit 0', async (t) => {
  // A free port found here may be taken by a test running beside this one before the child binds it (the
  // child then says so in one line and exits 2): that is the test's race, not the command's, so try again.
  let run = await startMockChild(t);
  for (let retry = 0; retry < 3 && !run.ready && run.err.some((line) => line.includes('the port is in use')); retry++)
    run = await startMockChild(t);
  const { child, exited, out, err, ports } = run;
  t.ok(run.ready, `the mocks started (stderr: ${err.join(' | ') || 'empty'})`);
  if (!run.ready) return;
  for (const role of ROLE_NAMES) {
    const response = await fetch(`${urlOf(out, role)}/health`);
    t.equal(response.status, 200, `${role} answers`);
    await response.body?.cancel();
  }
  // `ps --ppid` lists a process's children (and exits 1 when there are none).
  t.equal(
    spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).stdout.trim(),
    '',
    'the mocks started no child process',
  );
  t.same(err, [], 'nothing on stderr');
  t.notMatch(out.join('\n'), ERRORISH);
  child.kill('SIGTERM');
  const [code] = await exited;
  t.equal(code, 0);
  t.same(out.slice(-2), ['SIGTERM: stopping the mocks.', 'Prism mocks stopped.']);
  t.ok(await refuses(ports.mapping), 'the mapping port is closed');
});
