import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { findFreePorts } from '../src/lib/free-ports.ts';
import { main, UNREACHABLE } from './cli.ts';
import { findUnreachable, unreachableLine } from './reachability.ts';

// A dead target is one line per URL and exit status 3, before anything is sent.

/** A port nothing listens on: bound, then released. */
const deadPort = async (): Promise<number> => (await findFreePorts(1))[0]!;

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--quiet'], { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), env: {} });
  return { code, stdout, stderr };
}

t.test('a target with nothing listening: one line, exit status 3, no checks run', async (t) => {
  const port = await deadPort();
  const { code, stdout, stderr } = await run(['--target', `http://127.0.0.1:${port}`, '--fuzz-runs', '0']);
  t.equal(code, UNREACHABLE);
  t.equal(UNREACHABLE, 3);
  t.equal(
    stderr,
    `cannot reach the target at http://127.0.0.1:${port}: connection refused — is it running? (set with --target <url>)\n`,
    'exactly one line',
  );
  t.equal(stdout, '', 'no TAP, no per-request errors');
});

t.test('one line per unreachable URL, naming the roles it serves and the option that set it', async (t) => {
  const [a, b] = [await deadPort(), await deadPort()];
  const live = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => live.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => live.close(resolve)));
  const livePort = (live.address() as AddressInfo).port;
  const { code, stderr } = await run([
    '--target',
    `gateway=http://127.0.0.1:${a}`,
    '--target',
    `device=http://127.0.0.1:${a}`,
    '--target',
    `mapping=http://127.0.0.1:${livePort}`,
    '--compare',
    `http://127.0.0.1:${b}`,
  ]);
  t.equal(code, UNREACHABLE);
  t.same(
    stderr.trimEnd().split('\n'),
    [
      `cannot reach gateway, device at http://127.0.0.1:${a}: connection refused — is it running? (set with --target gateway=<url>, --target device=<url>)`,
      `cannot reach the target at http://127.0.0.1:${b}: connection refused — is it running? (set with --compare <url>)`,
    ],
    'the listening one is not listed; the compare target is probed too',
  );
});

t.test('a connection that does not come within the timeout says so and names --timeout', async (t) => {
  // The connector is injected: no waiting on the wall clock.
  const dead = await findUnreachable(
    { central: 'https://device.example:8443', mapping: 'http://ok.example' },
    {
      timeoutMs: 250,
      connector: async (host, port) => (host === 'device.example' && port === 8443 ? 'ETIMEDOUT' : undefined),
    },
  );
  t.same(dead, [{ keys: ['central'], url: 'https://device.example:8443', code: 'ETIMEDOUT', reason: 'no connection within 250 ms' }]);
  t.equal(
    unreachableLine(dead[0]!),
    'cannot reach central at https://device.example:8443: no connection within 250 ms — is it running? (set with --target central=<url>, or give it longer with --timeout <ms>)',
  );
  const noHost = await findUnreachable(
    { '*': 'http://nowhere.example' },
    { timeoutMs: 1, connector: async (_h, port) => (port === 80 ? 'ENOTFOUND' : undefined) },
  );
  t.match(
    unreachableLine(noHost[0]!),
    /^cannot reach the target at http:\/\/nowhere\.example: no such host — is the host name right\?/,
    'default port 80; an unknown host asks about the name',
  );
});

t.test("every URL is probed at once (a firewalled host costs one timeout, not one per role), listed in the targets' order", async (t) => {
  const targets = {
    gateway: 'http://a.example:1',
    mapping: 'http://b.example:2',
    device: 'http://c.example:3',
    central: 'http://a.example:1',
    diagnostics: 'http://d.example:4',
  };
  let inFlight = 0;
  let most = 0;
  const started: string[] = [];
  // The first host answers last: each probe waits for more turns of the event loop than the next one.
  const turns: Record<string, number> = { 'a.example': 8, 'b.example': 6, 'c.example': 4, 'd.example': 2 };
  const finished: string[] = [];
  const dead = await findUnreachable(targets, {
    timeoutMs: 1000,
    connector: async (host) => {
      started.push(host);
      most = Math.max(most, ++inFlight);
      for (let i = 0; i < turns[host]!; i++) await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      finished.push(host);
      return host === 'c.example' ? undefined : 'ETIMEDOUT';
    },
  });
  t.same(started, ['a.example', 'b.example', 'c.example', 'd.example'], 'each distinct URL once');
  t.equal(most, 4, 'all four probes were under way together');
  t.same(finished, ['d.example', 'c.example', 'b.example', 'a.example'], 'they ended in the reverse order...');
  t.same(
    dead.map((d) => [d.keys, d.url]),
    [
      [['gateway', 'central'], 'http://a.example:1'],
      [['mapping'], 'http://b.example:2'],
      [['diagnostics'], 'http://d.example:4'],
    ],
    "...and are listed in the targets' order",
  );
});
