import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import type { TapTest } from '../src/lib/tap-test.ts';
import { listenFailureLine, runMockCommand } from './cli.ts';
import { freeMockPortOffset, mockBasePort, mockPortOffset, resolveMockPorts } from './mock-ports.ts';
import { MockListenError } from './prism-mocks.ts';

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
// Every port a test listens on is one the OS has just handed out, never one of the 9xxx mock ports or a
// port some other program may use: the mocks move together, so a test moves them by an offset at which
// every port it needs was free a moment ago (freeMockPortOffset), or onto a port it holds itself.
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

/** Another program's listener on `port` (default: a free one); closed by `release()` (tests that count listeners) or at teardown. */
async function occupy(t: TapTest, port = 0): Promise<{ port: number; release(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.end('not a mock'));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
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

t.test('--help is the command line layout on stdout: the interfaces, the mock ports, the offset and its setting', async (t) => {
  const run = runInProcess(t, ['--help']);
  t.equal(await run.exited, 0);
  const text = run.out.join('\n');
  t.match(text, /^Usage: portolan mock \[options\] \[interface\.\.\.\]/);
  t.match(text.replaceAll('\n', ' '), /gateway 9080, mapping 9081, device 9100, central 9200, diagnostics 9300, login 9301/);
  t.match(text, /--port-offset <n>/);
  t.match(text, /PORTOLAN_MOCK_PORT_OFFSET {2}the same as --port-offset \(the flag wins\)/);
  t.match(text, /read none of the port\s+settings of `portolan start` \(PORTOLAN_PORT_OFFSET, PORTOLAN_<ROLE>_PORT\)/);
  t.same(run.err, []);
});

t.test('usage errors are one line and a pointer to --help, exit 2, never the whole help', async (t) => {
  const cases: [string[], Record<string, string>, string][] = [
    [
      ['maping'],
      {},
      'portolan mock: unknown interface maping; known: mapping, topology, snapshots, client-registration, rate-limit, device-config, health, access-session.',
    ],
    [['--prot-offset', '1'], {}, "portolan mock: unknown option '--prot-offset' (Did you mean --port-offset?)"],
    [
      ['--log-level', 'loud'],
      {},
      "portolan mock: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are error, warn.",
    ],
    [['--port-offset', 'ten'], {}, "portolan mock: --port-offset must be a whole number (e.g. 100 or -1500), got 'ten'"],
    [
      [],
      { PORTOLAN_MOCK_PORT_OFFSET: '1e3' },
      "portolan mock: PORTOLAN_MOCK_PORT_OFFSET must be a whole number (e.g. 100 or -1500), got '1e3'",
    ],
    [
      ['--port-offset', '60000'],
      {},
      "portolan mock: --port-offset 60000 puts the gateway mock on port 9080 + 60000 = 69080, outside 1..65535: choose an offset that keeps every mock's port in range",
    ],
    [
      ['device-config'],
      { PORTOLAN_MOCK_PORT_OFFSET: '-9100' },
      "portolan mock: PORTOLAN_MOCK_PORT_OFFSET -9100 puts the device mock on port 9100 - 9100 = 0, outside 1..65535: choose an offset that keeps every mock's port in range",
    ],
  ];
  for (const [argv, env, line] of cases) {
    const run = runInProcess(t, argv, env);
    t.equal(await run.exited, 2, argv.join(' '));
    t.same(run.err, [line, "Run 'portolan mock --help' for usage."], argv.join(' ') || JSON.stringify(env));
    t.same(run.out, []);
  }
});

t.test('the offset: --port-offset, else PORTOLAN_MOCK_PORT_OFFSET, else 0; negative moves every role down', async (t) => {
  t.same(mockPortOffset(undefined, {}), { ok: true, value: { value: 0, from: 'default' } });
  t.same(mockPortOffset(undefined, { PORTOLAN_MOCK_PORT_OFFSET: ' -1500 ' }), {
    ok: true,
    value: { value: -1500, from: 'PORTOLAN_MOCK_PORT_OFFSET' },
  });
  t.same(mockPortOffset('+20', { PORTOLAN_MOCK_PORT_OFFSET: '-1500' }), { ok: true, value: { value: 20, from: '--port-offset' } });
  // Worked out, not bound: such ports are not ours to take.
  t.same(resolveMockPorts(['gateway', 'login'], { value: -1500, from: '--port-offset' }), {
    ok: true,
    value: { gateway: 7580, login: 7801 },
  });
});

t.test('the settings of portolan start do not move the mocks: exporting them makes no collision', async (t) => {
  const { port: taken } = await occupy(t);
  const offset = await freeMockPortOffset(['gateway', 'mapping']);
  const run = runInProcess(t, ['mapping', 'rate-limit', '--port-offset', String(offset)], {
    PORTOLAN_MAPPING_PORT: String(taken),
    PORTOLAN_GATEWAY_PORT: String(taken),
    PORTOLAN_PORT_OFFSET: '7',
  });
  await run.ready;
  t.same(run.err, []);
  t.equal(urlOf(run.out, 'gateway'), `http://127.0.0.1:${mockBasePort('gateway') + offset}`);
  t.equal(urlOf(run.out, 'mapping'), `http://127.0.0.1:${mockBasePort('mapping') + offset}`, 'role port + 1000 + the offset');
  const response = await fetch(`${urlOf(run.out, 'mapping')}/api/charts`);
  t.equal(response.status, 200);
  t.match(await response.json(), { status: 'success' });
  run.stop();
  t.equal(await run.exited, 0);
});

t.test('PORTOLAN_MOCK_PORT_OFFSET moves the mocks; --port-offset wins over it', async (t) => {
  const offset = await freeMockPortOffset(['central']);
  const fromEnv = runInProcess(t, ['health'], { PORTOLAN_MOCK_PORT_OFFSET: String(offset) });
  await fromEnv.ready;
  t.same(fromEnv.err, []);
  t.equal(urlOf(fromEnv.out, 'central'), `http://127.0.0.1:${mockBasePort('central') + offset}`);
  fromEnv.stop();
  t.equal(await fromEnv.exited, 0);

  const other = await freeMockPortOffset(['central']);
  const flag = runInProcess(t, ['health', '--port-offset', String(other)], { PORTOLAN_MOCK_PORT_OFFSET: 'not read' });
  await flag.ready;
  t.same(flag.err, []);
  t.equal(urlOf(flag.out, 'central'), `http://127.0.0.1:${mockBasePort('central') + other}`);
  flag.stop();
  t.equal(await flag.exited, 0);
});

t.test('a mock port in use is one line naming the role, the port and what moves the mocks, exit 2; nothing stays listening', async (t) => {
  const offset = await freeMockPortOffset(['gateway', 'mapping']);
  const mappingPort = mockBasePort('mapping') + offset;
  const { release } = await occupy(t, mappingPort);
  const before = await listenersSettled();
  const run = runInProcess(t, ['mapping', 'rate-limit', '--port-offset', String(offset)]);
  t.equal(await run.exited, 2, 'a person fixes it: exit 2, as portolan start');
  t.same(run.err, [
    `The mapping mock cannot listen on 127.0.0.1:${mappingPort}: the port is in use. Stop what uses it, or move every mock with --port-offset.`,
  ]);
  t.same(run.out, []);
  t.equal(await listenersSettled(before), before, 'the gateway front and the Prism servers started before are closed');
  t.ok(await refuses(mockBasePort('gateway') + offset), 'the gateway port is free again');
  await release();

  const { port: taken } = await occupy(t);
  const viaEnv = runInProcess(t, ['health'], { PORTOLAN_MOCK_PORT_OFFSET: String(taken - mockBasePort('gateway')) });
  t.equal(await viaEnv.exited, 2);
  t.same(viaEnv.err, [
    `The gateway mock cannot listen on 127.0.0.1:${taken}: the port is in use. Stop what uses it, or move every mock with PORTOLAN_MOCK_PORT_OFFSET.`,
  ]);
});

t.test("an address that is not this machine's is one line naming --host, exit 2", async (t) => {
  const offset = await freeMockPortOffset();
  const run = runInProcess(t, ['health', '--host', '192.0.2.1', '--port-offset', String(offset)]); // TEST-NET-1: never local
  t.equal(await run.exited, 2);
  t.same(run.err, [
    'The gateway mock cannot listen on 192.0.2.1: this machine has no such address. Set --host to one of its addresses (127.0.0.1 or 0.0.0.0).',
  ]);
});

t.test('every listen failure names what moves the mocks: a privileged port names the offset, not --host', async (t) => {
  const failure = (code: string, port: number) =>
    new MockListenError('device', '127.0.0.1', port, Object.assign(new Error(code), { code }));
  t.equal(
    listenFailureLine(failure('EACCES', 80), { value: -9020, from: '--port-offset' }),
    "The device mock may not listen on 127.0.0.1:80 (ports below 1024 need privileges). Change --port-offset so every mock's port is above 1023.",
  );
  t.equal(
    listenFailureLine(failure('EACCES', 80), { value: -9020, from: 'PORTOLAN_MOCK_PORT_OFFSET' }),
    "The device mock may not listen on 127.0.0.1:80 (ports below 1024 need privileges). Change PORTOLAN_MOCK_PORT_OFFSET so every mock's port is above 1023.",
  );
  t.equal(
    listenFailureLine(failure('EMFILE', 80), { value: 0, from: 'default' }),
    'The device mock cannot listen on 127.0.0.1:80 (EMFILE). Check --port-offset and --host.',
  );
  t.notMatch(listenFailureLine(failure('EACCES', 80), { value: 0, from: 'default' }), /PORTOLAN_HOST|PORTOLAN_DEVICE_PORT/);
});

t.test('in this process: every role answers, the start prints only the table, and a stop closes every port', async (t) => {
  const offset = await freeMockPortOffset();
  const before = await listenersSettled();
  const run = runInProcess(t, [], { PORTOLAN_MOCK_PORT_OFFSET: String(offset) });
  await run.ready;
  t.same(run.err, [], 'nothing on stderr');
  t.equal(run.out.length, ROLE_NAMES.length + 1, `one line per role and the ready line:\n${run.out.join('\n')}`);
  t.notMatch(run.out.join('\n'), ERRORISH);
  t.equal(run.out.at(-1), 'Prism mocks (named examples) are running in one process. Ctrl-C stops it.');
  for (const role of ROLE_NAMES) {
    t.equal(urlOf(run.out, role), `http://127.0.0.1:${mockBasePort(role) + offset}`, `${role} on role port + 1000 + the offset`);
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

/** `npm run mock`'s CLI as a child on free ports (moved by --port-offset), once it has printed its ready line (or ended). */
async function startMockChild(t: TapTest) {
  const offset = await freeMockPortOffset();
  const ports = Object.fromEntries(ROLE_NAMES.map((role) => [role, mockBasePort(role) + offset])) as Record<RoleName, number>;
  const child = spawn(process.execPath, [CLI, '--port-offset', String(offset)], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
