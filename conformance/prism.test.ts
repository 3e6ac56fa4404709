import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { INTERFACES, listOperations, loadSpec } from '../src/lib/spec-catalog.ts';
import { main } from './cli.ts';
import { loadKnownFailures } from './known-failures.ts';
import type { OperationResult } from './model.ts';
import { PRISM_KNOWN_FAILURES } from './prism-target.ts';

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

// One Prism start for the whole file (it is the slow part), through the command line CI runs:
// `npm run conformance:mocks`.
t.test('the Prism mocks, checked statelessly, break their specs exactly where the known-failures list says, and say why', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-prism-conformance-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'summary.json');
  let stdout = '';
  let stderr = '';
  // 3 s per request: Prism answers in milliseconds, and the requests it never answers (a body that is
  // not JSON) should not cost the default 10 s each.
  const code = await main(
    ['--target', 'prism', '--known-failures', PRISM_KNOWN_FAILURES, '--seed', '1', '--timeout', '3000', '--json', json, '--quiet'],
    {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: {},
    },
  );
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
    t.match(stdout, new RegExp(`# operations: \\d+ pass, 0 fail, ${knownOps} known failures, 0 not implemented, 1 skipped`));
    t.match(stdout, /# result: PASS/);
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
