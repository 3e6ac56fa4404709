import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { main } from './cli.ts';
import { BROKEN_HANDLERS } from './fixtures/broken-handlers.ts';

// A team's own build that implements one mapping operation of ten: the other nine answer 501. The run
// passes (nothing failed) but its headline says so; --require-implemented turns the 501s into failures.

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--quiet', '--allow-writes'], {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    env: {},
  });
  return {
    code,
    stdout,
    stderr,
    summary: stdout
      .split('\n')
      .filter((l) => l.startsWith('# '))
      .slice(2),
  };
}

t.test('the headline of a target that implements part of the specs says how much', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-headline-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Only listCharts has a handler (a conforming one): every other mapping operation answers 501.
  const { system } = await startTestSystem(t, {
    config: { validateResponses: false },
    handlers: { mapping: { listCharts: BROKEN_HANDLERS.mapping.listCharts } },
  });
  const common = ['--target', `mapping=${system.url('mapping')}`, '--spec', 'mapping', '--no-scenarios', '--fuzz-runs', '0', '--seed', '3'];

  t.test('PASS, with the 501s and the uncovered statuses in the first line', async (t) => {
    const json = join(dir, 'partial.json');
    const junit = join(dir, 'partial.xml');
    const { code, summary } = await run([...common, '--json', json, '--report', junit]);
    t.equal(code, 0, 'nothing failed');
    const first = summary[0]!;
    t.match(
      first,
      /^# PASS: 1 of 10 operations implemented and conformant; 9 answer 501 \(not implemented\); \d+ documented status(es)? not covered$/,
      'the first line of the summary',
    );
    t.equal(summary.at(-1), `# result: ${first.slice(2)}`, 'and the last one, after the coverage matrix');

    const report = JSON.parse(readFileSync(json, 'utf8'));
    t.equal(report.headline, first.slice(2), 'the JSON carries the headline');
    t.match(report.counts, {
      operations: 10,
      conformant: 1,
      notImplemented: 9,
      failing: 0,
      knownFailure: 0,
      skipped: 0,
      uncoveredStatuses: report.uncovered.length,
    });
    t.match(report, { ok: true, totals: { operations: { pass: 1, notImplemented: 9 } } }, 'its existing fields are unchanged');

    const parser = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '@_',
      isArray: (name) => ['testsuite', 'property'].includes(name),
    });
    const suite = parser.parse(readFileSync(junit, 'utf8')).testsuites.testsuite[0];
    const properties = Object.fromEntries(suite.properties.property.map((p: Record<string, string>) => [p['@_name'], p['@_value']]));
    t.match(
      properties,
      {
        'conformance.headline': first.slice(2),
        'conformance.operations': '10',
        'conformance.conformant': '1',
        'conformance.notImplemented': '9',
      },
      'and the JUnit suites as properties',
    );
  });

  t.test('--require-implemented: FAIL, saying why', async (t) => {
    const { code, summary } = await run([...common, '--require-implemented']);
    t.equal(code, 1);
    t.match(
      summary[0],
      /^# FAIL: 1 of 10 operations implemented and conformant; 9 answer 501 \(not implemented\); \d+ documented status(es)? not covered \(9 not implemented \(--require-implemented\)\)$/,
    );
  });
});
