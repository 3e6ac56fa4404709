import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { applyKnownFailures, loadKnownFailures, type KnownFailure } from './known-failures.ts';
import type { OperationResult, ProbeResult, Violation } from './model.ts';
import { toJUnit } from './report-junit.ts';
import { verdict } from './report-json.ts';
import { toTap } from './report-tap.ts';
import { summaryLines } from './report-text.ts';
import { countOutcomes, type RunResult } from './model.ts';

const violation = (check: Violation['check'], message: string): Violation => ({
  interface: 'mapping',
  operationId: 'createChart',
  check,
  pointer: '',
  message,
});
const probe = (kind: ProbeResult['kind'], name: string, status: number | undefined, violations: Violation[]): ProbeResult => ({
  id: `mapping.createChart@mapping ${kind}: ${name}`,
  kind,
  name,
  status,
  outcome: violations.length > 0 ? 'fail' : 'pass',
  violations,
});
const operation = (probes: ProbeResult[]): OperationResult => ({
  interface: 'mapping',
  operationId: 'createChart',
  method: 'POST',
  path: '/api/charts',
  role: 'mapping',
  outcome: probes.some((p) => p.outcome === 'fail') ? 'fail' : 'pass',
  probes,
});

const HANGS: KnownFailure = {
  why: 'The mock never answers a body that is not JSON.',
  operations: ['mapping createChart@mapping'],
  probe: 'invalid: body that is not JSON',
  check: 'transport',
};
const STATUS_401: KnownFailure = {
  why: 'The mock answers 401 to everything, undeclared.',
  operations: ['mapping createChart@mapping', 'mapping getChart@mapping'],
  probe: '*',
  check: 'status',
  status: 401,
};

function run(operations: OperationResult[], known: readonly KnownFailure[]): RunResult {
  const unmetKnownFailures = applyKnownFailures(operations, known);
  const violations = operations.flatMap((o) => o.probes.flatMap((p) => p.violations));
  return {
    targets: { '*': 'http://mock' },
    seed: 1,
    safe: false,
    stateless: true,
    fuzzRuns: 0,
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
    operations,
    scenarios: [],
    fuzz: [],
    coverage: [],
    unmetKnownFailures,
    totals: {
      operations: countOutcomes(operations),
      scenarios: countOutcomes([]),
      fuzz: countOutcomes([]),
      violations: violations.filter((v) => !v.known).length,
      knownViolations: violations.filter((v) => v.known).length,
    },
  };
}

t.test('a failure the list names is reported with its reason and does not fail the run', async (t) => {
  const op = operation([
    probe('valid', "example 'full'", 201, []),
    probe('invalid', 'body that is not JSON', undefined, [violation('transport', 'no answer: timeout')]),
  ]);
  const result = run([op], [HANGS]);
  t.equal(op.probes[1]!.violations[0]!.known, HANGS.why);
  t.equal(op.probes[1]!.outcome, 'known-failure');
  t.equal(op.outcome, 'known-failure', 'never a pass');
  t.same(result.unmetKnownFailures, []);
  t.ok(verdict(result).ok);
  t.match(
    toTap(result),
    /not ok 1 - mapping createChart POST \/api\/charts @mapping \(2 requests\) # TODO known failure\n {2}---\n {2}known:\n {4}- "invalid body that is not JSON -> no answer: mapping createChart: transport at \(root\): no answer: timeout"\n {2}why:\n {4}- "The mock never answers a body that is not JSON."/,
  );
  t.match(
    summaryLines(result).join('\n'),
    /known failures .*\n {2}The mock never answers a body that is not JSON\.\n {4}mapping createChart@mapping invalid: body that is not JSON -> no answer: transport at \(root\): no answer: timeout/,
  );
  t.match(toJUnit(result), /<skipped message="known failure: The mock never answers a body that is not JSON\."/);
});

t.test('any other violation still fails, and a listed failure that did not happen fails too', async (t) => {
  const op = operation([
    probe('valid', "example 'full'", 201, [violation('body', 'must be string')]),
    probe('invalid', 'body that is not JSON', 400, []),
  ]);
  const result = run([op], [HANGS, STATUS_401]);
  t.equal(op.outcome, 'fail');
  t.notOk(op.probes[0]!.violations[0]!.known, 'a body violation is not the listed transport failure');
  t.same(
    result.unmetKnownFailures,
    [
      'mapping createChart@mapping invalid: body that is not JSON: transport did not happen (listed because: The mock never answers a body that is not JSON.)',
      'mapping createChart@mapping *: status (401) did not happen (listed because: The mock answers 401 to everything, undeclared.)',
      'mapping getChart@mapping *: status (401) did not happen (listed because: The mock answers 401 to everything, undeclared.)',
    ],
    'per entry and operation',
  );
  t.match(verdict(result).reasons, [
    '1 operation failed (1 violation)',
    '3 known failures did not happen (update the known-failures list)',
  ]);
  t.match(toTap(result), /not ok \d+ - known failure did not happen: mapping getChart@mapping/);
});

t.test('a status, probe or check other than listed is not the known failure', async (t) => {
  const op = operation([
    probe('valid', "example 'full'", 403, [violation('status', 'status 403 is not declared')]),
    probe('auth', 'no credentials', 401, [violation('status', 'status 401 is not declared')]),
  ]);
  run([op], [STATUS_401]);
  t.notOk(op.probes[0]!.violations[0]!.known, 'another status');
  t.equal(op.probes[1]!.violations[0]!.known, STATUS_401.why, "'*' matches every probe");
  t.equal(op.outcome, 'fail');
});

t.test('the file is checked when loaded', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-known-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, '- why: short\n  operations: [createChart]\n  probe: anything\n  check: nonsense\n');
  t.throws(
    () => loadKnownFailures(bad),
    /bad\.yaml is not valid:[\s\S]*\/0\/why[\s\S]*\/0\/operations\/0[\s\S]*\/0\/probe[\s\S]*\/0\/check/,
  );
  const good = join(dir, 'good.yaml');
  writeFileSync(
    good,
    "- why: The mock never answers a body that is not JSON.\n  operations: [mapping createChart@mapping]\n  probe: 'invalid: body that is not JSON'\n  check: transport\n",
  );
  t.same(loadKnownFailures(good), [HANGS]);
});
