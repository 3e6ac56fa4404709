// The spec-diff command: a ref against the working tree, two refs, two files (the fixture specs), the
// grouped text, markdown and JSON outputs, config overrides, exit codes and one-line errors.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TapTest } from '../lib/tap-test.ts';
import { CHECK_IDS } from './checks.ts';
import { runSpecDiffCommand } from './cli.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

const spec = (version: string, fields: string) => `openapi: 3.1.0
info: {title: Mapping, version: '${version}'}
paths:
  /api/charts/{chartId}:
    get:
      operationId: getChart
      parameters: [{name: chartId, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {type: object, properties: {${fields}}}}}
`;

const gitIn =
  (dir: string) =>
  (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' });

function repository(t: TapTest) {
  const dir = t.testdir({});
  const git = gitIn(dir);
  git('init', '-q', '-b', 'main');
  mkdirSync(join(dir, 'specs'));
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.0.0', 'name: {type: string}, date: {type: string}'));
  git('add', '.');
  git('commit', '-q', '-m', 'release 1.0.0');
  return dir;
}

async function run(argv: string[], cwd: string) {
  let out = '';
  let err = '';
  const code = await runSpecDiffCommand(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: {}, cwd });
  return { code, out, err };
}

const BUMP_LINE =
  'specs/mapping.yaml: 1 breaking change (response-field-removed) without a major version bump (info.version 1.1.0): bump info.version to 2.0.0\n';

t.test('a ref against the working tree: a breaking change without a major bump exits 1, grouped by operation', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.1.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD', '--spec', 'mapping'], dir);
  t.equal(code, 1);
  t.equal(err, BUMP_LINE);
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
  t.equal(
    out,
    [
      `Compared HEAD (${commit.slice(0, 12)}) with the working tree`,
      'specs/mapping.yaml (1.0.0 -> 1.1.0): 1 breaking, 0 warnings, 0 info',
      '  GET /api/charts/{chartId} (getChart)',
      '    breaking  response 200 field "date" removed  [response-field-removed]',
      '',
    ].join('\n'),
  );
  t.notMatch(out, /~1|\/paths\//, 'no JSON pointer in the text');
});

t.test('the same change with a major bump exits 0 and still lists it', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('2.0.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD', '--spec', 'mapping'], dir);
  t.equal(code, 0);
  t.equal(err, '');
  t.match(out, 'specs/mapping.yaml (1.0.0 -> 2.0.0): 1 breaking, 0 warnings, 0 info');
});

t.test('two files: every kind of change of the fixture specs, grouped by operation, breaking first', async (t) => {
  const { code, out, err } = await run(['charts-v1.yaml', 'charts-v2.yaml'], FIXTURES);
  t.equal(code, 1);
  t.equal(
    err,
    'charts-v2.yaml: 5 breaking changes (request-constraint-narrowed, request-field-became-required, response-enum-widened, operation-removed) without a major version bump (info.version 1.1.0): bump info.version to 2.0.0\n',
  );
  t.equal(
    out,
    `Compared charts-v1.yaml with charts-v2.yaml
charts-v2.yaml (1.0.0 -> 1.1.0): 5 breaking, 1 warning, 3 info
  GET /api/charts (listCharts)
    breaking  query parameter "limit" maximum changed from 100 to 50 (fewer values allowed)  [request-constraint-narrowed]
    info      optional query parameter "offset" added  [optional-parameter-added]
  POST /api/charts (createChart)
    breaking  request field "name" became required  [request-field-became-required]
    breaking  request field "name" maxLength changed from 200 to 100 (fewer values allowed)  [request-constraint-narrowed]
  GET /api/charts/{id} (getChart)
    breaking  response 200 field "risk_level" may now send "Unknown"  [response-enum-widened]
    info      path parameter "chartId" renamed to "id" (same position, same URL)  [path-parameter-renamed]
    info      response 404 added  [response-status-added]
  DELETE /api/charts/{chartId} (deleteChart)
    breaking  operation removed  [operation-removed]
  spec-wide
    warning   schema "Legacy" removed from components  [component-schema-removed]
`,
  );
});

t.test('two files need no git: they compare outside any clone', async (t) => {
  const dir = t.testdir({
    'a.yaml': spec('1.0.0', 'name: {type: string}'),
    'b.yaml': spec('1.0.1', 'name: {type: string}, x: {type: string}'),
  });
  const { code, out } = await run(['a.yaml', 'b.yaml'], dir);
  t.equal(code, 0);
  t.match(out, '    info      response 200 field "x" added  [response-field-added]');
});

t.test('two refs compare the committed specs; the working tree is left out', async (t) => {
  const dir = repository(t);
  const git = gitIn(dir);
  git('checkout', '-q', '-b', 'feature');
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.1.0', 'date: {type: string}'));
  git('commit', '-q', '-am', 'drop name');
  // An uncommitted change on top: not part of `main HEAD`.
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.1.0', 'other: {type: string}'));
  const { code, out, err } = await run(['main', 'HEAD'], dir);
  t.equal(code, 1);
  t.match(out, /^Compared main \([0-9a-f]{12}\) with HEAD \([0-9a-f]{12}\)\n/);
  t.match(out, '    breaking  response 200 field "name" removed  [response-field-removed]');
  t.notMatch(out, /"date"|"other"/, 'the working tree is not compared');
  t.match(err, /^specs\/mapping\.yaml: 1 breaking change \(response-field-removed\) without a major version bump/);
  const reversed = await run(['HEAD', 'main', '--spec', 'mapping'], dir);
  t.match(reversed.out, '    info      response 200 field "name" added  [response-field-added]');
});

t.test('config overrides: a check made a warning no longer fails; off hides it; --config names another file', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.1.0', 'name: {type: string}, size: {type: integer}'));
  const before = await run(['HEAD', '--spec', 'mapping'], dir);
  t.equal(before.code, 1);
  writeFileSync(join(dir, '.spec-diff.yaml'), 'severity:\n  response-field-removed: warning\n  response-field-added: off\n');
  const relaxed = await run(['HEAD', '--spec', 'mapping'], dir);
  t.equal(relaxed.code, 0);
  t.equal(relaxed.err, '');
  t.match(relaxed.out, /; severities from \.spec-diff\.yaml\n/);
  t.match(relaxed.out, 'specs/mapping.yaml (1.0.0 -> 1.1.0): 0 breaking, 1 warning, 0 info');
  t.match(relaxed.out, '    warning   response 200 field "date" removed  [response-field-removed]');
  t.notMatch(relaxed.out, /size|response-field-added/, 'a check set to off is not reported');
  writeFileSync(join(dir, 'strict.yaml'), 'severity:\n  response-field-added: breaking\n');
  const strict = await run(['HEAD', '--spec', 'mapping', '--config', 'strict.yaml'], dir);
  t.equal(strict.code, 1, 'the named file replaces .spec-diff.yaml');
  t.match(strict.err, /\(response-field-removed, response-field-added\)/);
  const checks = await run(['--list-checks'], dir);
  t.match(checks.out, /^response-field-removed\s+warning\s+a response field was removed \(default: breaking\)$/m);
});

t.test('an invalid config is one line naming the file and the key, exit 2', async (t) => {
  const dir = repository(t);
  const cases: [string, string][] = [
    [
      'severity:\n  response-feild-removed: info\n',
      "portolan spec-diff: .spec-diff.yaml: severity.response-feild-removed: unknown check id (did you mean response-field-removed? 'portolan spec-diff --list-checks' lists them)\n",
    ],
    [
      'severity:\n  operation-removed: fatal\n',
      'portolan spec-diff: .spec-diff.yaml: severity.operation-removed: "fatal" is not one of breaking, warning, info, off\n',
    ],
    [
      'severities:\n  operation-removed: info\n',
      "portolan spec-diff: .spec-diff.yaml: severities: unknown key (the only key is 'severity')\n",
    ],
    [
      'severity: [operation-removed]\n',
      'portolan spec-diff: .spec-diff.yaml: severity: expected a mapping of check id to breaking, warning, info or off\n',
    ],
  ];
  for (const [text, expected] of cases) {
    writeFileSync(join(dir, '.spec-diff.yaml'), text);
    const { code, out, err } = await run(['HEAD'], dir);
    t.equal(code, 2, text);
    t.equal(out, '');
    t.equal(err, expected);
  }
  writeFileSync(join(dir, '.spec-diff.yaml'), 'severity: {a: [\n');
  const broken = await run(['HEAD'], dir);
  t.equal(broken.code, 2);
  t.match(broken.err, /^portolan spec-diff: \.spec-diff\.yaml: not valid YAML: [^\n]+\n$/);
  rmSync(join(dir, '.spec-diff.yaml'));
  const missing = await run(['HEAD', '--config', 'nope.yaml'], dir);
  t.equal(missing.code, 2);
  t.equal(missing.err, 'portolan spec-diff: nope.yaml: cannot read the config file (no such file)\n');
});

t.test('--format markdown: a verdict first, then one table per operation', async (t) => {
  const { code, out } = await run(['charts-v1.yaml', 'charts-v2.yaml', '--format', 'markdown'], FIXTURES);
  t.equal(code, 1);
  const lines = out.split('\n');
  t.equal(lines[0], '## API changes: `charts-v1.yaml` → `charts-v2.yaml`');
  t.equal(lines[2], '**Breaking changes without a major version bump:** charts-v2.yaml (bump info.version to 2.0.0).');
  t.match(out, '### charts-v2.yaml (1.0.0 → 1.1.0): 5 breaking, 1 warning, 3 info');
  t.match(
    out,
    [
      '**`POST /api/charts`** (`createChart`)',
      '',
      '| Severity | Change | Check |',
      '| --- | --- | --- |',
      '| **breaking** | request field "name" became required | `request-field-became-required` |',
    ].join('\n'),
  );
  t.match(out, '| **breaking** | response 200 field "risk\\_level" may now send "Unknown" | `response-enum-widened` |');
  t.match(
    out,
    '**Spec-wide**\n\n| Severity | Change | Check |\n| --- | --- | --- |\n| warning | schema "Legacy" removed from components |',
  );
  const same = await run(['charts-v1.yaml', 'charts-v1.yaml', '--format', 'markdown'], FIXTURES);
  t.equal(same.code, 0);
  t.equal(same.out, '## API changes: `charts-v1.yaml` → `charts-v1.yaml`\n\nNo changes in the specs.\n');
});

t.test('--format json: stable fields for scripts (ids, severities, operations, pointers)', async (t) => {
  const { code, out } = await run(['charts-v1.yaml', 'charts-v2.yaml', '--format', 'json'], FIXTURES);
  t.equal(code, 1);
  const report = JSON.parse(out);
  t.same(Object.keys(report), ['schemaVersion', 'before', 'after', 'config', 'ok', 'specs', 'added']);
  t.same(
    { ...report, specs: undefined },
    {
      schemaVersion: 1,
      before: { kind: 'file', path: 'charts-v1.yaml' },
      after: { kind: 'file', path: 'charts-v2.yaml' },
      config: null,
      ok: false,
      specs: undefined,
      added: [],
    },
  );
  const [s] = report.specs;
  t.same(s.counts, { breaking: 5, warning: 1, info: 3 });
  t.equal(s.requiredVersion, '2.0.0');
  t.same(
    s.changes.find((c: { id: string }) => c.id === 'request-field-became-required'),
    {
      id: 'request-field-became-required',
      severity: 'breaking',
      method: 'POST',
      path: '/api/charts',
      operationId: 'createChart',
      message: 'request field "name" became required',
      pointer: '/paths/~1api~1charts/post/requestBody/content/application~1json/schema/properties/name',
    },
  );
  t.same(
    s.changes.filter((c: { method: string | null }) => c.method === null).map((c: { id: string }) => c.id),
    ['component-schema-removed'],
  );
  const legacy = await run(['charts-v1.yaml', 'charts-v2.yaml', '--json'], FIXTURES);
  t.equal(legacy.out, out, '--json is --format json');
});

t.test('usage errors: one line and a pointer to --help, exit 2', async (t) => {
  const dir = repository(t);
  const usage = (what: string) => `portolan spec-diff: ${what}\nRun 'portolan spec-diff --help' for usage.\n`;
  const cases: [string[], string][] = [
    [['no-such-ref'], usage("unknown git ref 'no-such-ref': not a commit in this clone nor a file (fetch it, or check the name)")],
    [[], usage('missing what to compare: a git ref, two git refs, or two spec files (old and new)')],
    [['HEAD', '--spec', 'nope'], usage(`unknown spec 'nope' for --spec (one of mapping, `)],
    [
      ['HEAD', '--format', 'yaml'],
      usage("option '--format <format>' argument 'yaml' is invalid. Allowed choices are text, json, markdown."),
    ],
    [['HEAD', '--json', '--format', 'markdown'], usage('--json and --format markdown ask for two outputs: keep one')],
    [
      ['specs/mapping.yaml'],
      usage("'specs/mapping.yaml' is a file: name two spec files (old and new), or a git ref to compare specs/*.yaml with"),
    ],
    [['specs/mapping.yaml', 'HEAD'], usage("'specs/mapping.yaml' is a file but 'HEAD' is not: name two spec files, or two git refs")],
    [
      ['specs/mapping.yaml', 'specs/mapping.yaml', '--spec', 'mapping'],
      usage('--spec picks a spec at git refs: with two files, leave it out'),
    ],
    [['HEAD', 'main', 'extra'], usage('too many arguments. Expected 2 arguments but got 3: HEAD, main, extra.')],
  ];
  for (const [argv, expected] of cases) {
    const { code, out, err } = await run(argv, dir);
    t.equal(code, 2, argv.join(' '));
    t.equal(out, '');
    if (argv.includes('nope')) t.match(err, expected.split('mapping, ')[0]!);
    else t.equal(err, expected, argv.join(' '));
  }
  const option = await run(['HEAD', '--colour'], dir);
  t.equal(option.code, 2);
  t.match(option.err, /^portolan spec-diff: unknown option '--colour'.*\nRun 'portolan spec-diff --help' for usage\.\n$/);
});

t.test('a ref missing from a shallow clone says to fetch the history', async (t) => {
  const origin = repository(t);
  gitIn(origin)('commit', '-q', '--allow-empty', '-m', 'second');
  const dir = join(origin, 'clone'); // one test directory per test: the clone goes inside the origin's work tree
  execFileSync('git', ['clone', '-q', '--depth', '1', `file://${origin}`, dir], { stdio: 'pipe' });
  const { code, err } = await run(['HEAD~1'], dir);
  t.equal(code, 2);
  t.match(
    err,
    /^portolan spec-diff: unknown git ref 'HEAD~1': .*shallow: fetch the history first \(git fetch --unshallow, or actions\/checkout with fetch-depth: 0\)\)\n/,
  );
});

t.test('--help: the usage, the examples and the exit codes on stdout, exit 0', async (t) => {
  const { code, out, err } = await run(['--help'], FIXTURES);
  t.equal(code, 0);
  t.equal(err, '');
  t.match(out, /^Usage: portolan spec-diff \[options\] \[old\] \[new\]/);
  t.match(out, 'portolan spec-diff origin/main HEAD');
  t.match(out, /Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 /);
});

t.test('--list-checks lists every check once with its severity', async (t) => {
  const { code, out } = await run(['--list-checks'], FIXTURES);
  t.equal(code, 0);
  t.same(
    out
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/)[0]),
    CHECK_IDS,
  );
  const json = JSON.parse((await run(['--list-checks', '--format', 'json'], FIXTURES)).out);
  t.same(json[0], { id: 'operation-removed', severity: 'breaking', default: 'breaking', description: 'an operation was removed' });
});

t.test('a spec deleted from the working tree is every operation removed', async (t) => {
  const dir = repository(t);
  rmSync(join(dir, 'specs/mapping.yaml'));
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 1);
  t.match(
    out,
    '\nspecs/mapping.yaml (1.0.0 -> (deleted)): 1 breaking, 0 warnings, 0 info\n  GET /api/charts/{chartId} (getChart)\n    breaking  operation removed  [operation-removed]\n',
  );
  t.notMatch(out, 'spec-wide', 'its info, servers and schemas are not listed one by one');
  t.match(
    err,
    /^specs\/mapping\.yaml: 1 breaking change \(operation-removed\) without a major version bump .*bump info.version to 2\.0\.0$/m,
  );
});

t.test('a repository without specs compares nothing: exit 2 with one line, not a silent success', async (t) => {
  const dir = t.testdir({ 'README.md': 'not the project\n' });
  const git = gitIn(dir);
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'other');
  const all = await run(['HEAD'], dir);
  t.equal(all.code, 2);
  t.match(
    all.err,
    /^portolan spec-diff: nothing compared: none of specs\/\{mapping,.*\}\.yaml is at [0-9a-f]{12} or in the working tree [^\n]+\n$/,
  );
  t.equal(all.out, '');
  const one = await run(['HEAD', '--spec', 'topology'], dir);
  t.equal(one.code, 2);
  t.match(one.err, /^portolan spec-diff: nothing compared: specs\/topology\.yaml is at [^\n]+\n$/);
});

t.test('a spec new since the ref is fine and said so', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/topology.yaml'), spec('1.0.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD', '--spec', 'topology'], dir);
  t.equal(code, 0);
  t.equal(err, '');
  t.match(out, /\nspecs\/topology\.yaml: new since HEAD, nothing to compare\n$/);
});

t.test('a git failure other than a missing path exits 2 with one line instead of passing the spec as new', async (t) => {
  const dir = repository(t);
  const blob = execFileSync('git', ['rev-parse', 'HEAD:specs/mapping.yaml'], { cwd: dir, encoding: 'utf8' }).trim();
  rmSync(join(dir, '.git/objects', blob.slice(0, 2), blob.slice(2)), { force: true });
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 2);
  t.equal(out, '');
  t.match(err, /^portolan spec-diff: cannot read specs\/mapping\.yaml at [0-9a-f]{40}: [^\n]+\n$/);
});

t.test('a spec with an external $ref is refused with one line naming the spec and the ref', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/thing.yaml'), 'Thing: {type: string}\n');
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.0.0', "name: {$ref: 'thing.yaml#/Thing'}"));
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 2);
  t.equal(out, '');
  t.match(
    err,
    /^portolan spec-diff: specs\/mapping\.yaml: cannot compare with [0-9a-f]{40}: in the working tree: external \$ref 'thing\.yaml#\/Thing' at \/paths\/.*\/properties\/name: [^\n]+\n$/,
  );
});
