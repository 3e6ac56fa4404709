import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const config = fileURLToPath(new URL('../.dependency-cruiser.mjs', import.meta.url));
const depcruise = fileURLToPath(new URL('../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/import-rules/', import.meta.url));

type Violation = { rule: { name: string }; from: string; to: string };

/** Runs the rules of `npm run lint:imports` on `src/` of `cwd`; one `rule: from -> to` line per violation, sorted. */
function violations(cwd: string): string[] {
  const run = spawnSync(process.execPath, [depcruise, 'src', '--config', config, '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error || !run.stdout.startsWith('{')) throw new Error(`depcruise did not run: ${run.error?.message ?? run.stderr}`);
  const report = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

const inFixture = violations(fixture);
const reported = (rule: string) => inFixture.filter((line) => line.startsWith(`${rule}: `));

t.test('src/ has no import that breaks the direction rules', async (t) => {
  t.same(violations(root), [], 'no violations (`npm run lint:imports` lists them)');
});

t.test('a cycle is reported', async (t) => {
  t.same(reported('no-circular'), ['no-circular: src/lib/cycle-a.ts -> src/lib/cycle-b.ts']);
});

t.test('the HTTP adapter importing an interface, the composition root, the gateway or traffic code is reported', async (t) => {
  t.same(reported('server-imports-no-interface'), [
    'server-imports-no-interface: src/server/wiring.ts -> src/app/compose.ts',
    'server-imports-no-interface: src/server/wiring.ts -> src/gateway/proxy.ts',
    'server-imports-no-interface: src/server/wiring.ts -> src/interfaces/charts/module.ts',
    'server-imports-no-interface: src/server/wiring.ts -> src/traffic/balance.ts',
  ]);
});

t.test('domain code importing node:http, node:https, openapi-backend, find-my-way or src/server/ is reported', async (t) => {
  t.same(
    reported('domain-imports-no-http'),
    [
      'domain-imports-no-http: src/interfaces/charts/charts.ts -> http',
      'domain-imports-no-http: src/interfaces/charts/errors.ts -> src/server/handler-types.ts',
      'domain-imports-no-http: src/interfaces/charts/route.ts -> ../../../node_modules/find-my-way/index.js',
      'domain-imports-no-http: src/interfaces/charts/secure.ts -> https',
      'domain-imports-no-http: src/interfaces/charts/validate.ts -> ../../../node_modules/openapi-backend/index.js',
    ],
    'type-only imports count; handlers.ts, module.ts, a test, a test helper and a fixture importing HTTP are not reported',
  );
});

t.test('src/lib/ importing an interface, the adapter, the composition root, the gateway or traffic code is reported', async (t) => {
  t.same(reported('lib-imports-nothing-above'), [
    'lib-imports-nothing-above: src/lib/layering.ts -> src/app/compose.ts',
    'lib-imports-nothing-above: src/lib/layering.ts -> src/gateway/proxy.ts',
    'lib-imports-nothing-above: src/lib/layering.ts -> src/interfaces/charts/charts.ts',
    'lib-imports-nothing-above: src/lib/layering.ts -> src/server/handler-types.ts',
    'lib-imports-nothing-above: src/lib/layering.ts -> src/traffic/balance.ts',
  ]);
});

t.test('src/traffic/ importing the adapter or the composition root is reported; its tests are not', async (t) => {
  t.same(reported('traffic-imports-no-adapter'), ['traffic-imports-no-adapter: src/traffic/balance.ts -> src/server/handler-types.ts']);
});

t.test(
  "src/gateway/ importing the adapter's server or the composition root is reported; the stage contract and its tests are not",
  async (t) => {
    t.same(reported('gateway-imports-no-root'), [
      'gateway-imports-no-root: src/gateway/answering.ts -> src/app/compose.ts',
      'gateway-imports-no-root: src/gateway/answering.ts -> src/server/http-adapter.ts',
    ]);
  },
);

t.test('src/traffic/ importing the gateway or an interface is reported; its tests are not', async (t) => {
  t.same(reported('traffic-imports-no-role'), [
    'traffic-imports-no-role: src/traffic/balance.ts -> src/gateway/proxy.ts',
    'traffic-imports-no-role: src/traffic/balance.ts -> src/interfaces/charts/charts.ts',
  ]);
});

t.test('src/ importing scripts/ is reported', async (t) => {
  t.same(reported('src-imports-no-scripts'), ['src-imports-no-scripts: src/lib/benchmarked.ts -> scripts/bench/tool.ts']);
});

t.test('the fixture tree breaks no rule beyond the ones listed above', async (t) => {
  const rules = [
    'no-circular',
    'server-imports-no-interface',
    'domain-imports-no-http',
    'traffic-imports-no-adapter',
    'gateway-imports-no-root',
    'traffic-imports-no-role',
    'src-imports-no-scripts',
    'lib-imports-nothing-above',
  ];
  t.same(
    inFixture.filter((line) => !rules.some((rule) => line.startsWith(`${rule}: `))),
    [],
  );
  t.equal(inFixture.length, 21);
});
