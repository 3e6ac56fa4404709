import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { ROLE_NAMES } from '../src/lib/roles.ts';
import { EXIT_STATUS, main } from './cli.ts';
import type { OperationResult } from './model.ts';
import { startReferenceTarget } from './reference-target.ts';
import { checkSummaryArithmetic, summaryOf } from './fixtures/summary-arithmetic.ts';

// One URL gives a correct run: the URL of any role of a running system finds the others through its role
// map; a URL with no role map gets every operation, and the roles it does not serve are "not served by this
// target", never failures. Against a target the run did not start, nothing that writes is sent.

type Summary = {
  totals: { violations: number };
  ok: boolean;
  routing?: string;
  writes?: { sent: boolean };
  operations: OperationResult[];
  counts: Record<string, number>;
};

async function run(args: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-one-url-'));
  try {
    let stdout = '';
    let stderr = '';
    const json = join(dir, 'out.json');
    const scenarios = args.includes('--scenario') ? [] : ['--no-scenarios'];
    const code = await main([...args, ...scenarios, '--fuzz-runs', '0', '--seed', '3', '--quiet', '--json', json], {
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

t.test('one URL of the reference system: its role map sends each operation to the role that serves it', async (t) => {
  const reference = await startReferenceTarget();
  t.teardown(() => reference.stop());
  const mapping = reference.targets.mapping!;
  const listCharts = async () => JSON.stringify(await (await fetch(`${mapping}/api/charts`)).json());
  const before = await listCharts();

  const { code, stdout, stderr, summary } = await run(['--target', mapping, '--spec', 'health', '--spec', 'mapping']);
  t.equal(code, EXIT_STATUS.pass, `passes (${stderr.slice(0, 300)})`);
  t.match(summary.routing, `from the role map of ${mapping}/.well-known/portolan (the reference system`);
  const health = summary.operations.filter((o) => o.operationId === 'getHealth');
  t.same(
    health.map((o) => `${o.role} ${o.url}`),
    ROLE_NAMES.map((role) => `${role} ${reference.targets[role]}`),
    'getHealth is checked on every role, each at its own URL, from the one URL given',
  );
  t.equal(
    summary.operations.find((o) => o.operationId === 'getPoolStatus')?.url,
    reference.targets.gateway,
    'a gateway operation goes to the gateway',
  );
  t.equal(summary.operations.find((o) => o.operationId === 'listCharts')?.url, mapping);
  t.notOk(
    summary.operations.some((o) => o.notServed),
    'nothing is "not served": the role map says where each role is',
  );

  t.match(
    summary.operations.find((o) => o.operationId === 'createChart'),
    { outcome: 'skipped', reason: /^not sent: it writes to the target: adds a chart/ },
    'a system this run did not start gets nothing that writes',
  );
  t.equal(summary.writes?.sent, false);
  t.match(
    stdout,
    /# writes: not sent \(a target this run did not start: .*\): 2 operation checks and 0 scenarios that write were skipped; --allow-writes sends them/,
  );
  t.equal(await listCharts(), before, 'the store holds no chart it did not hold before');
  const scenario = await run(['--target', mapping, '--spec', 'mapping', '--scenario', 'chart-create-then-read']);
  t.match(
    scenario.stdout,
    /ok \d+ - scenario chart-create-then-read # SKIP not run: it writes to the target: step '.*' calls createChart/,
    'nor a scenario that writes',
  );
  t.equal(await listCharts(), before);
  checkSummaryArithmetic(t, summaryOf(stdout));

  const writing = await run(['--target', mapping, '--spec', 'mapping', '--allow-writes']);
  t.equal(writing.code, EXIT_STATUS.pass);
  t.equal(writing.summary.operations.find((o) => o.operationId === 'createChart')?.outcome, 'pass', '--allow-writes sends them');
  t.match(writing.stdout, /# writes: sent \(--allow-writes: what the run created stays in the target\)/);
});

t.test('one URL with no role map: the roles it does not serve are "not served by this target", never failures', async (t) => {
  const { system } = await startTestSystem(t, { config: { validateResponses: false } });
  const gateway = new URL(system.url('gateway'));
  // A gateway without a role map (a team's own build): everything else passed on as it is.
  const stub = createServer((req, res) => {
    if (req.url?.startsWith('/.well-known/')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error","message":"No resource at this path."}');
      return;
    }
    const upstream = request(
      { host: gateway.hostname, port: gateway.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => stub.close(resolve)));
  const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;

  const { code, stdout, summary } = await run(['--target', url, '--spec', 'health', '--spec', 'rate-limit', '--spec', 'device-config'], {
    CONFORMANCE_ADMIN_PASSWORD: 'any-password',
  });
  const device = summary.operations.filter((o) => o.interface === 'device-config');
  t.ok(device.length > 10);
  t.same(
    device.filter((o) => !o.notServed).map((o) => o.operationId),
    [],
    'every device operation is not served by this target',
  );
  t.match(device[0], {
    outcome: 'skipped',
    notServed: { role: 'device' },
    reason: `not served by this target: the device role serves it (every request to the device role's operations at ${url} was answered 404)`,
  });
  t.same(
    summary.operations.filter((o) => o.outcome === 'fail').map((o) => o.operationId),
    [],
    'no failure',
  );
  t.equal(code, EXIT_STATUS.pass, 'the run passes');
  t.equal(summary.totals.violations, 0, 'their 404s are no violations');
  t.match(stdout, /\n# 0 violations; checked in /);
  t.equal(summary.counts.notServed, device.length);
  const lines = summaryOf(stdout);
  t.match(
    lines.find((l) => /^(PASS|FAIL):/.test(l)),
    `; ${device.length} not served by this target;`,
    'the headline counts them',
  );
  t.ok(
    lines.includes("  to check them, name each role's URL: --target device=<url>, or --config <file> with every role's URL"),
    'and says how to include them',
  );
  t.notOk(
    summary.operations.some((o) => o.interface !== 'device-config' && o.notServed),
    'what the gateway serves is checked',
  );
  t.match(stdout, /ok \d+ - device-config getDeviceInfo .* # SKIP not served by this target: the device role serves it/);
  checkSummaryArithmetic(t, lines);
});

t.test('a URL that answers 404 to everything serves nothing: its 404s are failures, not "not served"', async (t) => {
  const stub = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => stub.close(resolve)));
  const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  const { code, summary } = await run(['--target', url, '--spec', 'health', '--spec', 'device-config'], {
    CONFORMANCE_ADMIN_PASSWORD: 'any-password',
  });
  t.equal(code, EXIT_STATUS.fail, 'the run fails');
  t.equal(summary.counts.notServed ?? 0, 0, 'nothing is "not served"');
  t.ok(
    summary.operations.some((o) => o.outcome === 'fail'),
    'the 404s are failures',
  );
});
