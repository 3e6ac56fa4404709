// The spec-diff command against a throwaway git repository: exit codes, the bump line, --json, usage errors.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TapTest } from '../lib/tap-test.ts';
import { runSpecDiffCommand } from './cli.ts';

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

function repository(t: TapTest) {
  const dir = t.testdir({});
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  mkdirSync(join(dir, 'specs'));
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.0.0', 'name: {type: string}, date: {type: string}'));
  git('add', '.');
  git('commit', '-q', '-m', 'release 1.0.0');
  return dir;
}

async function run(argv: string[], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSpecDiffCommand(argv, { stdout: (s) => out.push(s), stderr: (s) => err.push(s), env: {}, cwd });
  return { code, out: out.join('\n'), err };
}

t.test('a breaking change without a major bump exits 1 naming the spec, the change and the version to bump to', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.1.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 1);
  t.same(err, [
    'specs/mapping.yaml: 1 breaking change(s) (property-removed) without a major version bump (info.version 1.1.0): bump info.version to 2.0.0',
  ]);
  t.match(
    out,
    'breaking /paths/~1api~1charts~1{chartId}/get/responses/200/content/application~1json/schema/properties/date: response field date removed',
  );
});

t.test('the same change with a major bump exits 0 and still lists it', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('2.0.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD', '--spec', 'mapping'], dir);
  t.equal(code, 0);
  t.same(err, []);
  t.match(out, 'specs/mapping.yaml (1.0.0 -> 2.0.0): 1 breaking, 0 non-breaking');
});

t.test('a non-breaking change exits 0; --json gives the classified changes', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.0.0', 'name: {type: string}, date: {type: string}, landmarks: {type: integer}'));
  const { code, out } = await run(['HEAD', '--json'], dir);
  t.equal(code, 0);
  const report = JSON.parse(out) as { specs: { spec: string; breaking: unknown[]; nonBreaking: { kind: string; breaking: boolean }[] }[] };
  t.same(
    report.specs.map((s) => [s.spec, s.breaking.length, s.nonBreaking.map((c) => c.kind)]),
    [['mapping', 0, ['property-added']]],
  );
});

t.test('usage errors exit 2 with one line', async (t) => {
  const dir = repository(t);
  const unknownRef = await run(['no-such-ref'], dir);
  t.equal(unknownRef.code, 2);
  t.same(unknownRef.err, ["spec-diff: unknown git ref 'no-such-ref' (not a commit in this clone; fetch it or check the name)"]);
  const noRef = await run([], dir);
  t.equal(noRef.code, 2);
  t.match(noRef.err[0], /^spec-diff: expected one git ref, got 0 \(usage: portolan spec-diff/);
  const badSpec = await run(['HEAD', '--spec', 'nope'], dir);
  t.equal(badSpec.code, 2);
  t.match(badSpec.err[0], /^spec-diff: unknown spec 'nope' for --spec \(one of mapping, /);
  const badOption = await run(['HEAD', '--colour'], dir);
  t.equal(badOption.code, 2);
  t.equal(badOption.err.length, 1);
  t.match(badOption.err[0], /--colour/);
});

t.test('a spec deleted from the working tree is every operation removed', async (t) => {
  const dir = repository(t);
  rmSync(join(dir, 'specs/mapping.yaml'));
  const { code, err } = await run(['HEAD'], dir);
  t.equal(code, 1);
  t.match(
    err[0],
    /^specs\/mapping\.yaml: 1 breaking change\(s\) \(operation-removed\) without a major version bump .*bump info.version to 2\.0\.0$/,
  );
});

t.test('a repository without specs compares nothing: exit 2 with one line, not a silent success', async (t) => {
  const dir = t.testdir({ 'README.md': 'not the project\n' });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'other');
  const all = await run(['HEAD'], dir);
  t.equal(all.code, 2);
  t.equal(all.err.length, 1);
  t.match(all.err[0], /^spec-diff: nothing compared: none of specs\/\{mapping,.*\}\.yaml is at [0-9a-f]{12} or in the working tree /);
  t.equal(all.out, '');
  const one = await run(['HEAD', '--spec', 'topology'], dir);
  t.equal(one.code, 2);
  t.same(one.err.length, 1);
  t.match(one.err[0], /^spec-diff: nothing compared: specs\/topology\.yaml is at /);
});

t.test('a spec new since the ref is fine and said so', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/topology.yaml'), spec('1.0.0', 'name: {type: string}'));
  const { code, out, err } = await run(['HEAD', '--spec', 'topology'], dir);
  t.equal(code, 0);
  t.same(err, []);
  t.equal(out, 'specs/topology.yaml: new since HEAD, nothing to compare');
});

t.test('a git failure other than a missing path exits 2 with one line instead of passing the spec as new', async (t) => {
  const dir = repository(t);
  const blob = execFileSync('git', ['rev-parse', 'HEAD:specs/mapping.yaml'], { cwd: dir, encoding: 'utf8' }).trim();
  rmSync(join(dir, '.git/objects', blob.slice(0, 2), blob.slice(2)), { force: true });
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 2);
  t.equal(out, '');
  t.equal(err.length, 1);
  t.match(err[0], /^spec-diff: cannot read specs\/mapping\.yaml at [0-9a-f]{40}: /);
});

t.test('a spec with an external $ref is refused with one line naming the spec and the ref', async (t) => {
  const dir = repository(t);
  writeFileSync(join(dir, 'specs/thing.yaml'), 'Thing: {type: string}\n');
  writeFileSync(join(dir, 'specs/mapping.yaml'), spec('1.0.0', "name: {$ref: 'thing.yaml#/Thing'}"));
  const { code, out, err } = await run(['HEAD'], dir);
  t.equal(code, 2);
  t.equal(out, '');
  t.equal(err.length, 1);
  t.match(
    err[0],
    /^spec-diff: specs\/mapping\.yaml: cannot compare with [0-9a-f]{40}: in the working tree: external \$ref 'thing\.yaml#\/Thing' at \/paths\/.*\/properties\/name: /,
  );
});
