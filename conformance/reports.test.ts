import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { main } from './cli.ts';
import { BROKEN_HANDLERS } from './fixtures/broken-handlers.ts';

type Case = {
  '@_classname': string;
  '@_name': string;
  failure?: { '@_message': string; '@_type': string; '#text': string };
  skipped?: { '@_message': string };
};
type Suite = { '@_name': string; '@_tests': string; '@_failures': string; testcase: Case[] };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  isArray: (name) => name === 'testsuite' || name === 'testcase',
});

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--quiet', '--allow-writes'], {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    env: {},
  });
  return { code, stdout, stderr };
}

t.test('reports of one system that conforms and one that does not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-reports-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const good = (await startTestSystem(t, { config: { validateResponses: false } })).system;
  const broken = (await startTestSystem(t, { config: { validateResponses: false }, handlers: BROKEN_HANDLERS })).system;
  const common = ['--spec', 'mapping', '--scenario', 'chart-create-then-read', '--fuzz-runs', '0', '--seed', '11'];

  t.test('JUnit XML parses and carries every failure with the operation, the check and the pointer', async (t) => {
    const junit = join(dir, 'broken.xml');
    const { code, stdout } = await run(['--target', `mapping=${broken.url('mapping')}`, ...common, '--report', junit]);
    t.equal(code, 1, 'a violation fails the run');
    t.match(stdout, /# result: FAIL/);
    const xml = parser.parse(readFileSync(junit, 'utf8'));
    const suites: Suite[] = xml.testsuites.testsuite;
    const mapping = suites.find((s) => s['@_name'] === 'mapping')!;
    t.ok(mapping, 'one suite per interface');
    const failures = mapping.testcase.filter((c) => c.failure);
    t.equal(Number(mapping['@_failures']), failures.length, 'the suite counts its failures');
    const wrongType = failures.find((c) => c['@_classname'] === 'mapping.createChart@mapping' && /body at \/id/.test(c.failure!['#text']));
    t.ok(wrongType, 'the wrong field type is a failure of createChart');
    t.equal(wrongType!.failure!['@_type'], 'body');
    t.match(wrongType!.failure!['#text'], /mapping createChart: body at \/id: must be string/);
    t.ok(
      failures.some((c) => c['@_classname'] === 'mapping.getChart@mapping' && c.failure!['@_type'] === 'status'),
      'the undeclared status is a failure of getChart',
    );
    t.ok(
      mapping.testcase.some(
        (c) => c['@_classname'] === 'mapping.listVessels@mapping' && /not implemented/.test(c.skipped?.['@_message'] ?? ''),
      ),
      'a 501 operation is skipped as not implemented',
    );
    const scenario = suites.find((s) => s['@_name'] === 'scenarios')!.testcase[0]!;
    t.match(scenario, { '@_classname': 'scenario.chart-create-then-read', failure: { '@_type': 'body' } }, 'the failing scenario too');
    t.equal(
      Number(xml.testsuites['@_failures']),
      suites.reduce((n, s) => n + Number(s['@_failures']), 0),
      'the total adds up',
    );
  });

  t.test('the JSON summary has the documented shape', async (t) => {
    const json = join(dir, 'good.json');
    const { code } = await run(['--target', `mapping=${good.url('mapping')}`, ...common, '--json', json]);
    t.equal(code, 0);
    const summary = JSON.parse(readFileSync(json, 'utf8'));
    t.match(summary, {
      version: 1,
      ok: true,
      reasons: [],
      headline:
        /^PASS: 10 of 10 operations implemented and conformant; 0 answer 501 \(not implemented\); \d+ documented status(es)? not covered$/,
      counts: { operations: 10, conformant: 10, notImplemented: 0, failing: 0, knownFailure: 0, skipped: 0, uncoveredStatuses: Number },
      seed: 11,
      safe: false,
      fuzzRuns: 0,
      startedAt: String,
      durationMs: Number,
      targets: { mapping: good.url('mapping') },
      totals: {
        operations: { pass: 10, fail: 0, notImplemented: 0, skipped: 0 },
        scenarios: { pass: 1 },
        fuzz: { pass: 0 },
        violations: 0,
      },
      notImplemented: {},
      uncovered: [],
      scenarios: [{ name: 'chart-create-then-read', outcome: 'pass', steps: Array }],
      fuzz: [],
    });
    t.equal(summary.counts.uncoveredStatuses, summary.uncovered.length, 'the headline counts the uncovered statuses the summary lists');
    t.match(summary.headline, ` ${summary.uncovered.length} documented status`);
    const createChart = summary.operations.find((o: { operationId: string }) => o.operationId === 'createChart');
    t.match(createChart, { interface: 'mapping', method: 'POST', path: '/api/charts', role: 'mapping', outcome: 'pass' });
    t.match(createChart.probes[0], { id: String, kind: 'valid', name: "example 'full'", outcome: 'pass', status: 201, violations: [] });
    t.notOk('shape' in createChart.probes[0], 'no body shapes (nor bodies) in the summary');
    t.ok(
      createChart.probes.some((p: { kind: string; status: number }) => p.kind === 'invalid' && p.status === 400),
      'invalid probes with their status',
    );
    t.match(
      summary.coverage.find((r: { operationId: string }) => r.operationId === 'createChart'),
      { statuses: { 201: 'exercised', 400: 'exercised', 503: 'unreachable' }, reasons: { 503: String } },
    );
  });

  t.test('the differential report lists where two targets disagree, operation by operation', async (t) => {
    const json = join(dir, 'diff.json');
    const junit = join(dir, 'diff.xml');
    const { code, stdout } = await run([
      '--target',
      `mapping=${good.url('mapping')}`,
      '--compare',
      `mapping=${broken.url('mapping')}`,
      ...common,
      '--json',
      json,
      '--report',
      junit,
    ]);
    t.equal(code, 1, 'conflicting differences fail the run');
    const { differential } = JSON.parse(readFileSync(json, 'utf8'));
    t.same(differential.targets, { mapping: broken.url('mapping') });
    const byKey = (pattern: RegExp) => differential.differences.filter((d: { key: string }) => pattern.test(d.key));
    t.match(
      byKey(/^mapping\.getChart@mapping valid/),
      [{ what: 'status', a: '404', b: '418', conflict: true }],
      'getChart: another status',
    );
    t.match(
      byKey(/^mapping\.createChart@mapping valid: example 'full'/),
      [{ what: 'shape', conflict: true, detail: /type \/id: string vs number/ }],
      'createChart: another type at /id',
    );
    t.match(
      byKey(/^mapping\.listVessels@mapping valid/),
      [{ what: 'status', a: '200', b: '501' }],
      'listVessels: implemented on one side only',
    );
    t.notOk(
      byKey(/^mapping\.listCharts@mapping/).some((d: { conflict: boolean }) => d.conflict),
      'listCharts has the same shape on both (its data differ)',
    );
    t.match(stdout, /not ok \d+ - targets differ: mapping\.getChart@mapping valid/);
    t.match(stdout, /# differential: A = mapping=http.*, B = mapping=http.*: \d+ differences, \d+ conflicting/);
    t.match(
      stdout,
      /^# result: FAIL: 10 of 10 operations implemented and conformant; 0 answer 501 \(not implemented\); \d+ documented status(es)? not covered \(\d+ conflicting differences between the targets\)$/m,
      'the good target itself has no violation',
    );
    t.match(
      stdout,
      /^# compare target: FAIL: 1 of 10 operations implemented and conformant; 2 fail; \d+ answer 501 \(not implemented\); /m,
      "the compare target's own headline",
    );
    const suites: Suite[] = parser.parse(readFileSync(junit, 'utf8')).testsuites.testsuite;
    const diff = suites.find((s) => s['@_name'] === 'differential')!;
    t.ok(
      diff.testcase.some((c) => c['@_classname'] === 'differential.mapping.getChart' && c.failure?.['@_type'] === 'status'),
      'JUnit carries the differences',
    );
  });
});

t.test('usage errors exit 2: one line naming what is wrong, and one pointing at --help', async (t) => {
  const pointer = "Run 'portolan conformance --help' for usage.\n";
  const missing = await run([]);
  t.equal(missing.code, 2);
  t.equal(missing.stderr, `portolan conformance: --target or --config is required\n${pointer}`);
  const badKey = await run(['--target', 'nowhere=http://127.0.0.1:1']);
  t.equal(badKey.code, 2);
  t.match(badKey.stderr, /^portolan conformance: --target nowhere=\.\.\.: nowhere is neither a role .* nor an interface .*\n/);
  t.equal(badKey.stderr.split('\n').length, 3, 'two lines');
  const badSpec = await run(['--target', 'http://127.0.0.1:1', '--spec', 'maps']);
  t.equal(badSpec.code, 2);
  t.equal(
    badSpec.stderr,
    `portolan conformance: option '--spec <name>' argument 'maps' is invalid. unknown; known: mapping, topology, snapshots, client-registration, rate-limit, device-config, health, access-session.\n${pointer}`,
  );
  const unknown = await run(['--target', 'reference', '--sfae']);
  t.equal(unknown.code, 2);
  t.equal(unknown.stderr, `portolan conformance: unknown option '--sfae' (Did you mean --safe?)\n${pointer}`);
  const help = await run(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: portolan conformance \[options\]/);
  t.match(help.stdout, /--safe\s+for real devices/);
  t.equal(help.stderr, '');
});

t.test('every command the help suggests is a valid command line', async (t) => {
  const help = (await run(['--help'])).stdout;
  const examples = [...help.matchAll(/^ {2}(portolan conformance [^#\n]*?)\s*(?:#.*)?$/gm)].map((m) => m[1]!);
  t.ok(examples.length >= 4, `the help has examples (${examples.join('; ')})`);
  t.notMatch(help, /npm run/, 'no npm script: the command is portolan conformance');
  for (const example of examples) {
    const words = example.split(/\s+/).slice(2);
    // Parsed only: --target reference and prism are started by the tests that run them.
    t.notOk(
      words.some((w) => /^--(?!target$|json$)/.test(w)),
      `${example}: options that exist`,
    );
    t.match(words, ['--target'], example);
  }
});
