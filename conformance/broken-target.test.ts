import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { BROKEN_HANDLERS } from './fixtures/broken-handlers.ts';
import { formatViolation, type RunResult, type Violation } from './model.ts';
import { toTap } from './report-tap.ts';
import { runConformance } from './run.ts';

const ADMIN = { user: 'admin', password: 'conformance-test-password' };

/** Every violation of a run, from probes, scenario steps and fuzzing. */
const allViolations = (result: RunResult): Violation[] => [
  ...result.operations.flatMap((o) => o.probes.flatMap((p) => p.violations)),
  ...result.scenarios.flatMap((s) => s.steps.flatMap((st) => st.violations)),
  ...result.fuzz.flatMap((f) => f.failure?.violations ?? []),
];

t.test('a deliberately broken handler is caught, naming the operation, the check and the JSON pointer', async (t) => {
  // Response validation off: the engine must see the raw answer, not the test system's 500 about it.
  const { system } = await startTestSystem(t, {
    config: { validateResponses: false, adminPassword: ADMIN.password },
    handlers: BROKEN_HANDLERS,
  });
  const targets = Object.fromEntries(system.roles.map((r) => [r.role, r.url]));
  const result = await runConformance({
    targets,
    interfaces: ['mapping', 'access-session'],
    credentials: { admin: ADMIN },
    seed: 5,
    fuzzRuns: 5,
    env: {},
  });
  const violations = allViolations(result);

  const wrongType = violations.find((v) => v.operationId === 'createChart' && v.check === 'body' && v.pointer === '/id');
  t.ok(wrongType, 'the number in ChartCreated.id is a body violation at /id');
  t.match(
    formatViolation(wrongType!),
    /^mapping createChart: body at \/id: must be string/,
    'the message names the operation, the check and the pointer',
  );

  const undeclared = violations.find((v) => v.operationId === 'getChart' && v.check === 'status');
  t.ok(undeclared, 'the 418 of getChart is a status violation');
  t.match(formatViolation(undeclared!), /^mapping getChart: status at \(root\): status 418 is not declared for getChart/);

  const missing = violations.find((v) => v.operationId === 'getAuthorizationRedirect' && v.check === 'header');
  t.ok(missing, 'the 302 without Location is a header violation');
  t.match(formatViolation(missing!), /^access-session getAuthorizationRedirect: header at \(root\): required header Location is missing/);

  t.equal(result.operations.find((o) => o.operationId === 'createChart')!.outcome, 'fail');
  t.equal(result.operations.find((o) => o.operationId === 'listCharts')!.outcome, 'pass', 'a conforming handler of the same target passes');
  t.equal(
    result.operations.find((o) => o.operationId === 'listVessels')!.outcome,
    'not-implemented',
    'an operation without a handler answers 501: not implemented',
  );
  t.equal(
    result.scenarios.find((s) => s.name === 'chart-create-then-read')!.outcome,
    'fail',
    'the scenario that creates a chart fails too',
  );
  const fuzzed = result.fuzz.find((f) => f.operationId === 'createChart')!;
  t.equal(fuzzed.outcome, 'fail', 'fuzzing finds the wrong type as well');
  t.match(
    fuzzed.failure,
    { path: String, request: /^POST http:\/\/127\.0\.0\.1:\d+\/api\/charts/ },
    'the failure carries the path and the shrunk request',
  );

  const tap = toTap(result);
  t.match(tap, /not ok \d+ - mapping createChart POST \/api\/charts @mapping/, 'TAP reports the failing operation');
  t.match(tap, /mapping createChart: body at \/id: must be string/, 'with the violation in its diagnostic block');
  t.ok(result.totals.violations >= 3);
});

t.test('a target that does not answer is a transport failure, not a pass', async (t) => {
  const result = await runConformance({
    targets: { '*': 'http://127.0.0.1:9' },
    interfaces: ['health'],
    scenarios: [],
    fuzzRuns: 0,
    env: {},
    timeoutMs: 2000,
  });
  const getHealth = result.operations.find((o) => o.operationId === 'getHealth')!;
  t.equal(getHealth.outcome, 'fail');
  t.equal(getHealth.probes[0]!.violations[0]!.check, 'transport');
});
