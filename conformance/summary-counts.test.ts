import t from 'tap';
import { checkSummaryArithmetic, parseHeadline, parseSum } from './fixtures/summary-arithmetic.ts';
import { countOutcomes, type FuzzResult, type OperationResult, type Outcome, type RunResult, type ScenarioResult } from './model.ts';
import { summaryLines } from './report-text.ts';

// The summary's counts agree with each other: one unit per line (operations, each counted once however
// many roles it was checked on; scenarios; fuzzed operations), each line a sum that adds up, and the
// headline's numbers the operations line's.

const op = (operationId: string, role: string, outcome: Outcome, extra: Partial<OperationResult> = {}): OperationResult => ({
  interface: 'health',
  operationId,
  method: 'GET',
  path: `/${operationId}`,
  role,
  outcome,
  probes:
    outcome === 'fail'
      ? [
          {
            id: operationId,
            kind: 'valid',
            name: 'example',
            outcome: 'fail',
            status: 500,
            violations: [{ interface: 'health', operationId, check: 'server-error', pointer: '', message: 'a 5xx' }],
          },
        ]
      : [],
  ...extra,
});
const scenario = (name: string, outcome: Outcome): ScenarioResult => ({
  name,
  file: `${name}.yaml`,
  description: name,
  outcome,
  steps: [],
});
const fuzz = (operationId: string, role: string, outcome: Outcome): FuzzResult => ({
  interface: 'health',
  operationId,
  role,
  outcome,
  runs: 5,
  seed: 1,
});

function result(operations: OperationResult[], scenarios: ScenarioResult[], fuzzed: FuzzResult[]): RunResult {
  return {
    targets: { '*': 'http://127.0.0.1:8080' },
    seed: 1,
    safe: false,
    stateless: false,
    fuzzRuns: 5,
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
    operations,
    scenarios,
    fuzz: fuzzed,
    coverage: [],
    unmetKnownFailures: [],
    totals: {
      operations: countOutcomes(operations),
      scenarios: countOutcomes(scenarios),
      fuzz: countOutcomes(fuzzed),
      violations: operations.filter((o) => o.outcome === 'fail').length,
      knownViolations: 0,
    },
  };
}

t.test('an operation on six roles is one operation: the counts add up to the operations, as the headline says', async (t) => {
  const roles = ['gateway', 'mapping', 'device', 'central', 'diagnostics', 'login'];
  const operations = [
    // Passes on five roles, fails on one: one failing operation, not five passes and a failure.
    ...roles.map((role, i) => op('getHealth', role, i === 2 ? 'fail' : 'pass')),
    op('getPoolStatus', 'gateway', 'pass'),
    op('listCharts', 'mapping', 'known-failure'),
    op('getChart', 'mapping', 'not-implemented'),
    op('getRule', 'device', 'skipped', { reason: 'no credentials' }),
    op('getTopology', 'central', 'skipped', { reason: 'not served', notServed: { role: 'central', why: 'every request answered 404' } }),
    op('getVessel', 'mapping', 'fail'),
  ];
  const lines = summaryLines(
    result(
      operations,
      [scenario('a', 'pass'), scenario('b', 'fail'), scenario('c', 'skipped')],
      [fuzz('getHealth', 'gateway', 'pass'), fuzz('getHealth', 'mapping', 'fail'), fuzz('getPoolStatus', 'gateway', 'pass')],
    ),
  );
  checkSummaryArithmetic(t, lines);
  t.equal(
    lines[0],
    'FAIL: 1 of 7 operations implemented and conformant; 2 fail; 1 fail as listed known failures; 1 answers 501 (not implemented); 1 skipped; 1 not served by this target; 0 documented statuses not covered (2 operations, 1 scenario and 1 fuzzed operation failed (2 violations))',
  );
  t.same(parseSum(lines[1]!.slice('operations: '.length)), {
    total: 7,
    parts: {
      conformant: 1,
      fail: 2,
      'known failures': 1,
      'not implemented': 1,
      skipped: 1,
      'not served by this target': 1,
    },
  });
  t.match(lines[1], '(each operation counted once; 12 checks of an operation on a role)', 'the other unit, named as such');
  t.equal(lines[2], 'scenarios: 3 = 1 pass + 1 fail + 0 not implemented + 1 skipped');
  t.equal(
    lines[3],
    'fuzzing: 2 operations = 1 pass + 1 fail + 0 not implemented + 0 skipped (5 runs each)',
    'fuzzed operations, each once',
  );
});

t.test('the arithmetic check catches a summary whose counts disagree', async (t) => {
  const failures: string[] = [];
  const recorder = {
    equal: (a: unknown, b: unknown, message?: string) => (a === b ? true : (failures.push(message ?? ''), false)),
    ok: (v: unknown, message?: string) => (v ? true : (failures.push(message ?? ''), false)),
  };
  checkSummaryArithmetic(recorder as never, [
    'PASS: 70 of 70 operations implemented and conformant; 0 answer 501 (not implemented); 0 documented statuses not covered',
    'operations: 70 = 75 conformant + 0 fail + 0 known failures + 0 not implemented (501) + 0 skipped + 0 not served by this target',
    'scenarios: 0 = 0 pass + 0 fail + 0 not implemented + 0 skipped',
    'fuzzing: off',
  ]);
  t.match(failures, ['operations: the parts add up to 70', 'conformant'], '"75 pass" beside "70 of 70" is caught');
  t.equal(parseHeadline('PASS: 3 of 4 operations implemented and conformant; 1 skipped; 2 documented statuses not covered')?.skipped, 1);
});
