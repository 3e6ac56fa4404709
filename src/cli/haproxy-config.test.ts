import t from 'tap';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyCommand } from '../app/test-cluster.ts';
import { managedProcess } from '../app/test-cluster-process.ts';
import { haproxyServers, healthy, waitFor } from '../app/test-cluster-wait.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { findFreePorts } from '../lib/free-ports.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import { DEVICE_CHECK_AUTH_ENV, haproxyConfig, layoutProblems, type HaproxyLayout } from './haproxy-config.ts';
import { runHaproxyConfigCommand } from './haproxy-command.ts';

const twoOfEach: HaproxyLayout = {
  roles: ROLE_NAMES.map((role, i) => ({
    role,
    bind: { host: '*', port: 8080 + i },
    servers: [
      { host: '10.0.0.5', port: 9000 + i },
      { host: 'fd00::6', port: 9000 + i },
    ],
  })),
};

/** HAProxy's verdict on a configuration (`haproxy -c`), or a failure when HAProxy is missing. */
function haproxyCheck(t: TapTest, text: string): { status: number | null; output: string } | undefined {
  const haproxy = haproxyCommand();
  if (!haproxy) {
    t.fail('HAProxy is not installed: run `node scripts/system-packages.ts` (npm test does) or, as root, `apt-get install -y haproxy`.');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'portolan-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'haproxy.cfg'), text);
  const run = spawnSync(haproxy, ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

t.test('the configuration for two processes of every role is one HAProxy accepts', async (t) => {
  const text = haproxyConfig(twoOfEach);
  const checked = haproxyCheck(t, text);
  if (!checked) return;
  t.equal(checked.status, 0, `haproxy -c accepts it (${checked.output.trim()})`);
  t.notMatch(checked.output, /WARNING|ALERT/, 'without a warning');
  t.equal(haproxyCheck(t, text.replace('balance roundrobin', 'balance nonsense'))?.status, 1, 'and refuses a broken one');
});

t.test('each role has a frontend at its port and a backend of its processes, checked at /health, round robin', async (t) => {
  const text = haproxyConfig(twoOfEach);
  for (const [i, role] of ROLE_NAMES.entries()) {
    const frontend = new RegExp(`^frontend ${role}\\n {4}bind \\*:${8080 + i}\\n(?: {4}.*\\n)* {4}default_backend ${role}_processes$`, 'm');
    t.match(text, frontend, `${role}: frontend on ${8080 + i}`);
    const backend = text.slice(text.indexOf(`\nbackend ${role}_processes`)).split('\n\n')[0]!;
    t.match(backend, /balance roundrobin/, `${role}: round robin`);
    t.match(
      backend,
      /option httpchk\n {4}http-check send meth GET uri \/health ver HTTP\/1\.1 hdr Host localhost\n {4}http-check expect status 200/,
    );
    t.match(
      backend,
      new RegExp(`server ${role}1 10\\.0\\.0\\.5:${9000 + i}\\n {4}server ${role}2 \\[fd00::6\\]:${9000 + i}$`, 'm'),
      `${role}: both processes, IPv6 in brackets`,
    );
  }
  t.match(
    text,
    /timeout connect 5s[\s\S]*timeout server 5m[\s\S]*option http-server-close/,
    'timeouts and one connection to a process per request',
  );
});

t.test(
  'the device pair: only the device whose failover status says ACTIVE gets writes; its credentials stay out of the file',
  async (t) => {
    const text = haproxyConfig({ ...twoOfEach, deviceCheck: 'failover-status' });
    const device = text.slice(text.indexOf('\nbackend device_active')).split('\n\n')[0]!;
    t.match(
      text,
      /frontend device\n {4}bind \*:8082\n.*\n {4}use_backend device_active if !METH_GET\n {4}default_backend device_processes\n/,
    );
    t.match(device, /uri \/mgmt\/tm\/cm\/failover-status .*hdr Authorization "Basic \$\{PORTOLAN_HAPROXY_DEVICE_AUTH\}"/);
    t.notMatch(text.replace(device, ''), /failover-status/, 'the reads and the other roles are checked at /health');
    t.equal(haproxyCheck(t, text)?.status, 0, 'haproxy -c accepts it');

    // Two stand-ins for the pair behind a real HAProxy: every request goes to the active one.
    const haproxy = haproxyCommand();
    if (!haproxy) return;
    const [front, active, standby, stats] = await findFreePorts(4);
    const auth = Buffer.from('admin:s3cret').toString('base64');
    const seen: string[] = [];
    const stub = (name: string, status: string) =>
      createServer((request, response) => {
        if (request.url === '/mgmt/tm/cm/failover-status') {
          // The real product's answer, and a 401 without the administrative credentials.
          if (request.headers.authorization !== `Basic ${auth}`) return void response.writeHead(401).end();
          const entries = {
            'https://localhost/mgmt/tm/cm/failover-status/0': {
              nestedStats: { entries: { status: { description: status }, summary: { description: '1/1 active' } } },
            },
          };
          return void response.end(JSON.stringify({ kind: 'tm:cm:failover-status:failover-statusstats', entries }));
        }
        if (request.url === '/health') return void response.end('{"status":"healthy"}');
        seen.push(`${name} ${request.method}`);
        response.end(name);
      });
    const servers: Server[] = [stub('active', 'ACTIVE'), stub('standby', 'STANDBY')];
    servers[0]!.listen(active, '127.0.0.1');
    servers[1]!.listen(standby, '127.0.0.1');
    await Promise.all(servers.map((s) => once(s, 'listening')));
    t.teardown(() => {
      for (const s of servers) s.close();
    });
    const dir = mkdtempSync(join(tmpdir(), 'portolan-haproxy-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const config = haproxyConfig({
      roles: [
        {
          role: 'device',
          bind: { host: '127.0.0.1', port: front! },
          servers: [
            { host: '127.0.0.1', port: standby! },
            { host: '127.0.0.1', port: active! },
          ],
        },
      ],
      deviceCheck: 'failover-status',
      checkIntervalMs: 200,
      stats: { host: '127.0.0.1', port: stats! },
    });
    writeFileSync(join(dir, 'haproxy.cfg'), config);
    const balancer = managedProcess('haproxy', haproxy, ['-db', '-f', join(dir, 'haproxy.cfg')], {
      ...process.env,
      [DEVICE_CHECK_AUTH_ENV]: auth,
    });
    balancer.start();
    t.teardown(() => balancer.kill());
    await healthy({ url: `http://127.0.0.1:${stats}`, process: balancer }, '/;csv');
    // Once HAProxy's checks settle (two in a row), the standby (device1) is out, the active one (device2) in.
    let states = new Map<string, string>();
    await waitFor('the checks to settle', async () => {
      states = await haproxyServers(`http://127.0.0.1:${stats}`);
      return [...states.values()].every((state) => state === 'UP' || state === 'DOWN');
    });
    t.same(
      Object.fromEntries(states),
      {
        'device_processes/device1': 'UP',
        'device_processes/device2': 'UP',
        'device_active/device1': 'DOWN',
        'device_active/device2': 'UP',
      },
      'HAProxy has both devices for reads, the active one alone for writes',
    );
    seen.length = 0;
    for (let i = 0; i < 6; i++) await (await fetch(`http://127.0.0.1:${front}/mgmt/shared/appsvcs/declare`, { method: 'POST' })).text();
    t.same([...new Set(seen)], ['active POST'], 'every write went to the active device');
    seen.length = 0;
    for (let i = 0; i < 6; i++) await (await fetch(`http://127.0.0.1:${front}/mgmt/shared/appsvcs/declare`)).text();
    t.same([...new Set(seen)].sort(), ['active GET', 'standby GET'], 'reads went to both');
    t.notMatch(readFileSync(join(dir, 'haproxy.cfg'), 'utf8'), /s3cret|YWRtaW46czNjcmV0/, 'no credential in the file');
  },
);

t.test('client registration answers close the connection through HAProxy, at the configured path', async (t) => {
  const text = haproxyConfig({ ...twoOfEach, registrationPath: '/oauth/register' });
  t.match(text, /http-request set-var\(txn\.registration\) bool\(true\) if \{ path '\/oauth\/register' \}/);
  t.match(text, /http-after-response set-header Connection close if \{ var\(txn\.registration\) -m bool \}/);
  t.same(layoutProblems({ ...twoOfEach, registrationPath: "/x' }" }), [
    'the registration path must start with / and hold no space, quote or control character',
  ]);
});

t.test('a layout HAProxy could not run is refused, each problem in one line', async (t) => {
  t.same(
    layoutProblems({
      roles: [
        { role: 'gateway', bind: { host: '*', port: 8080 }, servers: [] },
        { role: 'mapping', bind: { host: '*', port: 8080 }, servers: [{ host: 'a', port: 70000 }] },
      ],
      stats: { host: '*', port: 8080 },
    }),
    [
      'the gateway role has no server',
      'the gateway frontend and the statistics page both listen on *:8080',
      'the mapping role: port 70000 of a is outside 1..65535',
      'the mapping frontend and the statistics page both listen on *:8080',
      'the gateway and mapping frontends both listen on *:8080',
    ],
  );
  t.throws(() => haproxyConfig({ roles: [] }), /no role to balance/);
});

/** `portolan haproxy-config <args>` in this process. */
async function command(args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const code = await runHaproxyConfigCommand(args, { stdout: (s) => void (out += s), stderr: (s) => void (err += s), env });
  return { code, out, err };
}

t.test('portolan haproxy-config: every role on each machine, at the ports the settings give', async (t) => {
  const { code, out } = await command(['--hosts', '10.0.0.5,10.0.0.6', '--stats', '127.0.0.1:8404'], { PORTOLAN_PORT_OFFSET: '1000' });
  t.equal(code, 0);
  t.match(out, /frontend gateway\n {4}bind \*:9080\n/);
  t.match(out, /server login1 10\.0\.0\.5:9301\n {4}server login2 10\.0\.0\.6:9301\n/);
  t.match(out, /frontend stats\n {4}bind 127\.0\.0\.1:8404\n/);
  t.equal(haproxyCheck(t, out)?.status, 0, 'haproxy -c accepts it');

  const some = await command(['--server', 'mapping=10.0.0.7:9081', '--server', 'mapping=[fd00::7]:9081', '--bind', '127.0.0.1']);
  t.equal(some.code, 0);
  t.match(some.out, /frontend mapping\n {4}bind 127\.0\.0\.1:8081\n/);
  t.notMatch(some.out, /frontend gateway/, 'only the roles given');

  const dir = mkdtempSync(join(tmpdir(), 'portolan-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const written = await command(['--hosts', 'a', '-o', join(dir, 'haproxy.cfg')]);
  t.equal(written.code, 0);
  t.match(readFileSync(join(dir, 'haproxy.cfg'), 'utf8'), /^# HAProxy in front of Portolan's roles/);
  t.match(written.err, /Wrote .*haproxy\.cfg: check it with haproxy -c -f/);
});

t.test('portolan haproxy-config: usage errors are one line and the pointer to --help, exit 2', async (t) => {
  for (const [args, message, env] of [
    [[], /name the machines \(--hosts\) or the processes \(--server\) to balance/],
    [['--server', 'nowhere=a:1'], /unknown role 'nowhere'/],
    [['--server', 'mapping=a'], /expected host:port, got 'a'/],
    [['--device-check', 'maybe', '--hosts', 'a'], /expected 'health' or 'failover-status'/],
    [['--hosts', 'a'], /PORTOLAN_PORT_OFFSET/, { PORTOLAN_PORT_OFFSET: 'x' }],
    [['--hosts', 'a', '--roles', 'gateway'], /a frontend needs a port: the gateway port is 0/, { PORTOLAN_GATEWAY_PORT: '0' }],
  ] as const) {
    const { code, err, out } = await command([...args], env ?? {});
    t.equal(code, 2, args.join(' '));
    t.match(err, message);
    t.match(err, /\nRun 'portolan haproxy-config --help' for usage\.\n$/);
    t.equal(out, '');
  }
});
