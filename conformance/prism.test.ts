import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { INTERFACES, listOperations, loadSpec } from '../src/lib/spec-catalog.ts';
import { main } from './cli.ts';
import { loadKnownFailures } from './known-failures.ts';
import type { OperationResult } from './model.ts';
import { PRISM_KNOWN_FAILURES, startPrismTarget } from './prism-target.ts';
import { checkSummaryArithmetic, summaryOf } from './fixtures/summary-arithmetic.ts';

type Summary = {
  ok: boolean;
  reasons: string[];
  stateless: boolean;
  fuzzRuns: number;
  totals: { violations: number; knownViolations: number; operations: { knownFailure: number } };
  operations: OperationResult[];
  scenarios: unknown[];
  fuzz: unknown[];
  knownFailures: { operation: string; probe: string; check: string; why: string }[];
  unmetKnownFailures: string[];
};

// One Prism start for the main test (it is the slow part), given to the command line as the URL of one of
// its roles, as a user gives `portolan mock`'s: its role map says where every role is and that it is a
// Prism mock, so the run is stateless and the known gaps of the mocks apply, with no option. The requests
// Prism never answers wait the short deadline of a known gap, not the 10 s timeout.
t.test('the Prism mocks, checked statelessly, break their specs exactly where the known-failures list says, and say why', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-prism-conformance-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const prism = await startPrismTarget();
  t.teardown(() => prism.stop());
  const json = join(dir, 'summary.json');
  let stdout = '';
  let stderr = '';
  const code = await main(['--target', prism.targets.gateway!, '--seed', '1', '--json', json, '--quiet'], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: {},
  });
  const summary: Summary = JSON.parse(readFileSync(json, 'utf8'));
  const known = loadKnownFailures(PRISM_KNOWN_FAILURES);

  const unexpected = summary.operations.flatMap((o) =>
    o.probes.flatMap((p) =>
      p.violations
        .filter((v) => !v.known)
        .map(
          (v) =>
            `${o.interface} ${o.operationId}@${o.role} ${p.kind}: ${p.name} -> ${p.status ?? 'no answer'}: ${v.check} at ${v.pointer || '(root)'}: ${v.message}`,
        ),
    ),
  );
  t.same(unexpected, [], 'no answer breaks the spec except as listed: a mock that answers what its spec forbids fails the build');
  t.same(summary.unmetKnownFailures, [], 'every listed failure still happens');
  t.equal(summary.totals.violations, 0);
  t.ok(summary.ok, `the run passes (${summary.reasons.join('; ')})`);
  t.equal(code, 0, `exit status 0 (stderr: ${stderr.slice(0, 300)})`);

  t.test('every listed operation fails as listed and is reported as a known failure, never as a pass', async (t) => {
    for (const entry of known) {
      for (const key of entry.operations) {
        const op = summary.operations.find((o) => `${o.interface} ${o.operationId}@${o.role}` === key);
        t.ok(op, `${key} was checked`);
        t.not(op?.outcome, 'pass', `${key} is not counted as passing`);
        t.ok(
          op?.probes.some((p) => p.violations.some((v) => v.known === entry.why && v.check === entry.check)),
          `${key}: ${entry.check} (${entry.probe})`,
        );
      }
    }
    const knownOps = new Set(known.flatMap((k) => k.operations));
    t.same(
      summary.operations
        .filter((o) => o.outcome === 'known-failure')
        .map((o) => `${o.interface} ${o.operationId}@${o.role}`)
        .sort(),
      [...knownOps].sort(),
      'exactly the listed operations are known failures',
    );
    t.equal(summary.totals.operations.knownFailure, knownOps.size);
    t.ok(summary.totals.knownViolations >= knownOps.size);
  });

  t.test('the report says why for each known failure', async (t) => {
    for (const entry of known) {
      const firstWords = entry.why.split(' ').slice(0, 8).join(' ');
      t.ok(stdout.includes(`#   ${firstWords}`), `the summary names the reason: ${firstWords}...`);
      t.ok(
        summary.knownFailures.some((k) => k.why === entry.why),
        'the JSON summary carries it with the violation',
      );
    }
    t.match(
      stdout,
      /not ok \d+ - mapping createChart POST \/api\/charts @mapping \(\d+ requests\) # TODO known failure/,
      'TAP: a known failure is a TODO point',
    );
    t.match(
      stdout,
      / {2}known:\n {4}- "invalid body that is not JSON -> no answer: mapping createChart: transport at \(root\): [^\n]*"\n {2}why:\n {4}- "Prism never answers a request whose JSON body does not parse\./,
      'TAP: the violations with their reason',
    );
    const knownOps = new Set(known.flatMap((k) => k.operations)).size;
    const operations = new Set(summary.operations.map((o) => `${o.interface} ${o.operationId}`)).size;
    const knownOperations = new Set([...new Set(known.flatMap((k) => k.operations))].map((k) => k.split('@')[0])).size;
    t.match(
      stdout,
      `# operations: ${operations} = ${operations - knownOperations - 1} conformant + 0 fail + ${knownOperations} known failures + 0 not implemented (501) + 1 skipped + 0 not served by this target (each operation counted once; ${summary.operations.length} checks of an operation on a role)`,
      `${knownOps} known failures on a role, each operation counted once`,
    );
    t.match(stdout, /# result: PASS/);
    t.match(stdout, /# writes: sent \(a Prism mock keeps nothing\)/);
    t.match(stdout, /# roles: from the role map of http:\/\/127\.0\.0\.1:\d+\/\.well-known\/portolan \(the Prism mocks /);
    t.match(
      stdout,
      /# {3}every authenticated snapshots operation was refused \(401\/403\): the login loginDiagnosticsUser set only sso_completed, not the ssosession cookie the ssoSession scheme sends, so no request carried a session; the Prism mock answers the login with the spec's one Set-Cookie example/,
      'the hint names the real cause: the session cookie the mock never sets, not the credentials',
    );
    t.notMatch(stdout, /check the 'admin' credential/);
    t.match(
      stdout,
      /no answer within 1000 ms \(known never to answer this request: the wait is cut short\)/,
      'the requests Prism never answers wait the short deadline',
    );
    checkSummaryArithmetic(t, summaryOf(stdout));
    t.match(
      stdout,
      /\n {2}reproduce:\n {4}- \|-\n {6}# invalid body that is not JSON\n {6}curl -sS -i -X POST http:\/\/127\.0\.0\.1:\d+\/api\/charts -H 'content-type: application\/json' --data-raw '\{"unterminated'\n/,
      'each failure with the curl command that repeats it',
    );
    t.comment(
      stdout
        .split('\n')
        .filter((l) => l.startsWith('# ') && !/^#\s+\S+ \S+\s+\d{3}:/.test(l))
        .join('\n'),
    );
  });

  t.test('stateless: every operation on every role it is served on, with valid, invalid and credential-less requests only', async (t) => {
    t.ok(summary.stateless);
    const expected = INTERFACES.flatMap((i) =>
      listOperations(loadSpec(i.name)).flatMap((op) => op.roles.map((role) => `${i.name} ${op.operationId}@${role}`)),
    );
    t.same(
      summary.operations.map((o) => `${o.interface} ${o.operationId}@${o.role}`),
      expected,
      'every operation on each of its roles, in spec order',
    );
    t.same(
      summary.operations.filter((o) => o.outcome === 'skipped').map((o) => `${o.interface} ${o.operationId}@${o.role}: ${o.reason}`),
      ['device-config getBashUtility@device: the credentials were refused: valid requests got 401, like a request without credentials'],
      'one skip: getBashUtility declares no success and Prism answers its first status, 401, even with credentials',
    );
    const probes = summary.operations.flatMap((o) => o.probes);
    t.ok(
      probes.some((p) => p.kind === 'invalid' && p.outcome === 'pass'),
      'invalid requests are checked (and Prism refuses most as declared)',
    );
    t.ok(
      probes.some((p) => p.name === 'no credentials' && p.outcome === 'pass'),
      'requests without credentials are checked',
    );
    t.notOk(
      probes.some((p) => p.name === 'wrong credentials'),
      'no wrong credentials: the mock has no accounts to check them against',
    );
    t.same(
      [summary.scenarios, summary.fuzz, summary.fuzzRuns],
      [[], [], 0],
      'no scenarios and no fuzzing: they need a target that keeps state',
    );
  });
});

t.test('--target prism: the mocks started here get the same defaults (stateless, known gaps)', async (t) => {
  let stdout = '';
  const code = await main(['--target', 'prism', '--spec', 'mapping', '--seed', '1', '--quiet'], {
    stdout: (text) => void (stdout += text),
    stderr: () => {},
    env: {},
  });
  t.equal(code, 0);
  t.match(stdout, /# PASS: 8 of 10 operations implemented and conformant; 2 fail as listed known failures;/);
  t.match(stdout, /# seed 1 \(--seed 1 repeats the run\), safe mode off, stateless, fuzzing off/);
});
