import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { main } from './cli.ts';
import { checkSummaryArithmetic, summaryOf } from './fixtures/summary-arithmetic.ts';

t.test('the reference system passes the whole suite on what it implements; 501s are listed, never passed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-conformance-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'summary.json');
  let stdout = '';
  let stderr = '';
  const code = await main(['--target', 'reference', '--seed', '20250314', '--fuzz-runs', '8', '--json', json, '--quiet'], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: {},
  });
  const summary = JSON.parse(readFileSync(json, 'utf8'));
  const failing = summary.operations.filter((o: { outcome: string }) => o.outcome === 'fail');
  t.same(
    failing.map((o: { operationId: string }) => o.operationId),
    [],
    'no operation fails',
  );
  t.same(
    summary.scenarios
      .filter((s: { outcome: string }) => s.outcome === 'fail' || s.outcome === 'skipped')
      .map((s: { name: string; reason: string }) => `${s.name}: ${s.reason}`),
    [],
    'every scenario runs: passes or is not implemented yet',
  );
  t.same(
    summary.fuzz.filter((f: { outcome: string }) => f.outcome !== 'pass').map((f: { operationId: string }) => f.operationId),
    [],
    'fuzzing finds nothing',
  );
  t.equal(summary.totals.violations, 0);
  t.equal(code, 0, `exit status 0 (stderr: ${stderr.slice(0, 500)})`);

  for (const name of ['mapping', 'health']) {
    const ops = summary.operations.filter((o: { interface: string }) => o.interface === name);
    t.ok(ops.length > 0 && ops.every((o: { outcome: string }) => o.outcome === 'pass'), `every ${name} operation passes`);
  }
  for (const name of ['chart-create-then-read', 'unknown-id-404', 'payload-too-large']) {
    t.equal(summary.scenarios.find((s: { name: string }) => s.name === name)?.outcome, 'pass', `scenario ${name} passes`);
  }
  t.ok(summary.fuzz.length > 0, 'fuzzing ran');

  const notImplemented = summary.operations.filter((o: { outcome: string }) => o.outcome === 'not-implemented');
  // The listing names exactly the operations that answered 501, no more, no fewer.
  t.same(
    Object.values(summary.notImplemented).flat().sort(),
    notImplemented.map((o: { operationId: string }) => o.operationId).sort(),
    'the not-implemented list is exactly the 501 operations',
  );
  for (const op of notImplemented) {
    t.ok(summary.notImplemented[op.interface]?.includes(op.operationId), `${op.operationId} is listed as not implemented`);
    // Security runs before the 501 (it is implemented for every operation): where no credential can be
    // had yet (B's tokens, C's sessions), probes that expect a refusal get one. A valid request never passes.
    // (The engine then counts a valid probe answered 401/403 as a pass: it could not log in, the login is a 501.)
    t.ok(
      op.probes.every(
        (p: { outcome: string; kind: string; status?: number }) =>
          p.outcome !== 'pass' || p.kind !== 'valid' || p.status === 401 || p.status === 403,
      ),
      `${op.operationId} has no valid probe that passed past security`,
    );
    t.match(
      stdout,
      new RegExp(`ok \\d+ - ${op.interface} ${op.operationId} .* # SKIP not implemented`),
      `${op.operationId} is a SKIP in TAP`,
    );
  }
  const passed = summary.operations.filter((o: { outcome: string }) => o.outcome === 'pass').length;
  t.equal(summary.totals.operations.pass, passed, 'only passing operations are counted as passes');
  t.equal(summary.totals.operations.notImplemented, notImplemented.length);

  t.same(summary.uncovered, [], 'every documented status of an implemented operation is exercised or listed as unreachable');
  t.match(stdout, /# coverage \(x exercised, u unreachable/, 'the coverage matrix is printed');
  t.match(stdout, /# {3}mapping createChart\s+201:x 400:x 408:u 413:x 415:x 503:u/);
  t.equal(
    summary.counts.notImplemented,
    new Set(notImplemented.map((o: { interface: string; operationId: string }) => `${o.interface} ${o.operationId}`)).size,
    'the headline counts each 501 operation once',
  );
  t.equal(
    summary.counts.conformant + summary.counts.notImplemented,
    summary.counts.operations,
    'every other operation is implemented and conformant',
  );
  t.match(
    stdout,
    /^# PASS: \d+ of \d+ operations implemented and conformant; \d+ answers? 501 \(not implemented\); 0 documented statuses not covered$/m,
    'the headline, first',
  );
  t.match(stdout, /^# result: PASS: /m, 'and last');
  t.match(stdout, /^# writes: sent \(the reference system this run started, in a temporary store\)$/m, 'writes: its own store');
  checkSummaryArithmetic(t, summaryOf(stdout));
  t.comment(
    stdout
      .split('\n')
      .filter((l) => l.startsWith('# '))
      .join('\n'),
  );
});
