import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { EXIT_STATUS, main } from './cli.ts';
import { createHttpClient, type HttpRequest } from './http.ts';
import type { KnownFailure } from './known-failures.ts';
import type { OperationResult } from './model.ts';
import { parseRoleMap } from './role-map.ts';
import { runConformance } from './run.ts';

// The role map as the CLI reads it, from a small server of this test that publishes one (its roles are a
// reference system's, started here), and the config file for a build without one.

type Summary = {
  ok: boolean;
  stateless: boolean;
  routing?: string;
  writes?: { sent: boolean; why: string };
  unmetKnownFailures: string[];
  operations: OperationResult[];
};

async function run(args: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-role-map-'));
  try {
    let stdout = '';
    let stderr = '';
    const json = join(dir, 'out.json');
    const code = await main([...args, '--no-scenarios', '--fuzz-runs', '0', '--seed', '4', '--quiet', '--json', json], {
      stdout: (s) => void (stdout += s),
      stderr: (s) => void (stderr += s),
      env,
    });
    const summary: Summary | undefined = code === EXIT_STATUS.usage ? undefined : JSON.parse(readFileSync(json, 'utf8'));
    return { code, stdout, stderr, summary: summary! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A server that answers the role map given and 404 to anything else; counts what it was asked. */
async function roleMapStub(t: Test, map: () => unknown) {
  const asked: string[] = [];
  const stub = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (req.url === '/.well-known/portolan') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(map()));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => stub.close(resolve)));
  return { url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, asked };
}

t.test('a role map sends every operation to its role; its registration host and kind are used', async (t) => {
  const { system } = await startTestSystem(t, { config: { validateResponses: false } });
  const roles = (names: readonly string[]) => names.map((role) => ({ role, url: system.url(role as never), docs: null, interfaces: [] }));
  let map: Record<string, unknown> = {};
  const stub = await roleMapStub(t, () => map);
  const all = ['gateway', 'mapping', 'device', 'central', 'diagnostics', 'login'];

  t.test('kind reference: routed by role, read-only, the role map read once and nothing else sent to its URL', async (t) => {
    map = { service: 'portolan', version: '9.9.9', kind: 'reference', registrationHost: 'wrong.example', roles: roles(all) };
    stub.asked.length = 0;
    const { code, summary } = await run(['--target', stub.url, '--spec', 'health', '--spec', 'rate-limit']);
    t.equal(code, EXIT_STATUS.pass);
    t.same(stub.asked, ['GET /.well-known/portolan'], 'the role map is all the stub is asked');
    t.same(
      summary.operations.filter((o) => o.operationId === 'getHealth').map((o) => o.url),
      all.map((role) => system.url(role as never)),
    );
    t.equal(summary.operations.find((o) => o.operationId === 'getRateLimitStatus')?.url, system.url('gateway'));
    t.match(summary.routing, `from the role map of ${stub.url}/.well-known/portolan (the reference system 9.9.9: gateway, mapping,`);
    t.notOk(summary.stateless, 'the reference keeps state');

    const registration = await run(['--target', stub.url, '--spec', 'client-registration', '--allow-writes']);
    t.match(
      registration.stdout,
      /hint: every registration request \(sent with Host wrong\.example\) was answered 404/,
      "registration is sent with the role map's registration host",
    );
  });

  t.test('roles the map does not list are not served by this target', async (t) => {
    map = { service: 'portolan', version: '9.9.9', kind: 'reference', registrationHost: null, roles: roles(['gateway', 'mapping']) };
    const { code, summary } = await run(['--target', stub.url, '--spec', 'health', '--spec', 'device-config']);
    t.equal(code, EXIT_STATUS.pass);
    t.same(
      summary.operations.filter((o) => o.operationId === 'getHealth').map((o) => o.role),
      ['gateway', 'mapping'],
    );
    const device = summary.operations.filter((o) => o.interface === 'device-config');
    t.ok(device.length > 0 && device.every((o) => o.notServed?.role === 'device'));
    t.match(device[0]?.reason, `the role map of ${stub.url}/.well-known/portolan names no device role`);
  });

  t.test("kind prism-mock: stateless, writes sent, and the Prism mocks' known gaps applied unless --no-known-failures", async (t) => {
    map = { service: 'portolan', version: '9.9.9', kind: 'prism-mock', registrationHost: null, roles: roles(all) };
    // The roles are the reference system's: Prism's gaps do not happen there, which shows they were applied.
    const applied = await run(['--target', stub.url, '--spec', 'mapping']);
    t.ok(applied.summary.stateless, 'checked statelessly');
    t.match(applied.summary.writes, { sent: true, why: 'a Prism mock keeps nothing' });
    t.match(
      applied.summary.unmetKnownFailures,
      [/^mapping createChart@mapping invalid: body that is not JSON: transport did not happen/, /^mapping createResource@mapping invalid/],
      "the Prism list is applied, and only its entries about the operations checked (mapping's)",
    );
    t.equal(applied.summary.unmetKnownFailures.length, 2);
    t.equal(applied.code, EXIT_STATUS.fail);

    const off = await run(['--target', stub.url, '--spec', 'mapping', '--no-known-failures']);
    t.same(off.summary.unmetKnownFailures, []);
    t.equal(off.code, EXIT_STATUS.pass, '--no-known-failures turns them off');
  });
});

t.test('a config file names each role: routed by it, credentials from the variables it names', async (t) => {
  const password = 'config-pw-51d2';
  const { system } = await startTestSystem(t, { config: { validateResponses: false, adminPassword: password } });
  const dir = mkdtempSync(join(tmpdir(), 'portolan-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'conformance.yaml');
  writeFileSync(
    file,
    `roles:\n  gateway: ${system.url('gateway')}\n  device: ${system.url('device')}\ncredentials:\n  admin: { password: MY_DEVICE_PASSWORD }\n`,
  );
  const { code, stdout, summary } = await run(['--config', file, '--spec', 'health', '--spec', 'device-config', '--spec', 'mapping'], {
    MY_DEVICE_PASSWORD: password,
  });
  t.equal(code, EXIT_STATUS.pass);
  t.equal(
    summary.operations.find((o) => o.operationId === 'getDeviceInfo')?.outcome,
    'pass',
    'the credential came from MY_DEVICE_PASSWORD',
  );
  t.same(
    summary.operations.filter((o) => o.operationId === 'getHealth').map((o) => o.url),
    [system.url('gateway'), system.url('device')],
  );
  t.ok(
    summary.operations.filter((o) => o.interface === 'mapping').every((o) => o.notServed?.why === `${file} names no mapping role`),
    'a role the file does not name is not served',
  );
  t.match(summary.routing, `from ${file} (gateway, device)`);
  t.notMatch(stdout, password, 'the password is never printed');

  const unset = await run(['--config', file, '--spec', 'health']);
  t.equal(unset.code, EXIT_STATUS.usage);
  t.equal(
    unset.stderr,
    `portolan conformance: ${file}: credentials.admin.password names MY_DEVICE_PASSWORD, which is not set\nRun 'portolan conformance --help' for usage.\n`,
  );
  writeFileSync(file, 'roles: { gateway: not-a-url }\n');
  const bad = await run(['--config', file]);
  t.equal(bad.code, EXIT_STATUS.usage);
  t.match(bad.stderr, /^portolan conformance: .*roles gateway=not-a-url: expected an http\(s\) URL/);
});

t.test('a probe the known failures say is never answered waits the short deadline, the others the run timeout', async (t) => {
  const { system } = await startTestSystem(t, { config: { validateResponses: false } });
  const sent: HttpRequest[] = [];
  const known: KnownFailure[] = [
    {
      why: 'This target never answers a body that is not JSON.',
      operations: ['mapping createChart@mapping'],
      probe: 'invalid: body that is not JSON',
      check: 'transport',
    },
  ];
  await runConformance({
    targets: { mapping: system.url('mapping') },
    interfaces: ['mapping'],
    scenarios: [],
    fuzzRuns: 0,
    env: {},
    knownFailures: known,
    noAnswerWaitMs: 250,
    transport: (options) => {
      const client = createHttpClient(options);
      return { send: (request) => (sent.push(request), client.send(request)), close: () => client.close() };
    },
  });
  const deadlines = sent.filter((r) => r.timeoutMs !== undefined);
  t.equal(deadlines.length, 1, 'one request');
  t.match(deadlines[0], { method: 'POST', url: `${system.url('mapping')}/api/charts`, body: '{"unterminated', timeoutMs: 250 });
  t.ok(sent.length > 20, 'every other request has the run timeout');
});

const SOURCE = 'http://127.0.0.1:8080/.well-known/portolan';

t.test('parseRoleMap takes the known roles with URLs, and nothing that is not a Portolan role map', async (t) => {
  const roles = [
    { role: 'gateway', url: 'http://127.0.0.1:8080/', docs: null, interfaces: ['health'] },
    { role: 'printer', url: 'http://127.0.0.1:9' },
    { role: 'mapping', url: 'not a url' },
  ];
  t.match(parseRoleMap({ service: 'portolan', version: '1', kind: 'reference', registrationHost: '', roles }, SOURCE), {
    kind: 'reference',
    registrationHost: null,
    roles: [{ role: 'gateway', url: 'http://127.0.0.1:8080', interfaces: ['health'] }],
  });
  t.equal(parseRoleMap({ service: 'other', roles }, SOURCE), undefined);
  t.equal(parseRoleMap({ service: 'portolan', roles: [] }, SOURCE), undefined);
  t.equal(parseRoleMap('portolan', SOURCE), undefined);
});

t.test('a role map cannot send the run (and its credentials) to another host: only scheme and port are taken', async (t) => {
  const roles = [
    { role: 'device', url: 'https://evil.example:8443/', docs: null, interfaces: ['device-config'] },
    { role: 'login', url: 'http://admin:pw@10.0.0.5:8301/x?y=1', docs: null, interfaces: ['snapshots'] },
  ];
  t.match(parseRoleMap({ service: 'portolan', version: '1', kind: 'reference', roles }, 'http://[::1]:8080/.well-known/portolan'), {
    roles: [
      { role: 'device', url: 'https://[::1]:8443' },
      { role: 'login', url: 'http://[::1]:8301/x' },
    ],
  });
});
