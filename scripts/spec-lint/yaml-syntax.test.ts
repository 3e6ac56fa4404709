// A YAML syntax error is one finding naming the file and the line, never a stack trace: in the spec
// linted, or in another spec of its folder (read only when the folder's README has a seed table).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { lintSpec } from './lint.ts';
import { formatFinding } from './findings.ts';

const fixture = (name: string) => readFileSync(new URL(`fixtures/origin/${name}`, import.meta.url), 'utf8');
const BROKEN = 'openapi: 3.1.0\ninfo:\n  title: [Broken\n  version: 1.0.0\npaths: {}\n';
const rel = (path: string) => relative(process.cwd(), path);

t.test('a syntax error in another spec of the folder is one finding naming that file and line; the spec is still linted', async (t) => {
  const dir = t.testdir({ 'README.md': fixture('README.md'), 'things.yaml': fixture('things.yaml'), 'broken.yaml': BROKEN });
  const findings = await lintSpec(join(dir, 'things.yaml'));
  const yaml = findings.filter((f) => f.tool === 'yaml');
  t.equal(yaml.length, 1);
  t.match(
    formatFinding(yaml[0]!),
    new RegExp(
      `^${rel(join(dir, 'broken.yaml')).replace(/[.]/g, '\\.')}: error yaml/syntax: YAML syntax error at line 4: .+ \\(the seed table of .*README\\.md is read without its operations\\)$`,
    ),
  );
  t.notMatch(yaml[0]!.message, /\n/, 'one line');
  t.same(
    findings.filter((f) => f.tool === 'origin').map((f) => f.pointer),
    ['/components/schemas/Thing/properties/note', '/paths/~1things~1{id}/get/responses/410'],
    'the seed table is still read',
  );
});

t.test('without a seed table beside it, the other specs of the folder are not parsed at all', async (t) => {
  const dir = t.testdir({ 'things.yaml': fixture('things.yaml'), 'broken.yaml': BROKEN });
  const findings = await lintSpec(join(dir, 'things.yaml'));
  t.same(
    findings.filter((f) => f.tool === 'yaml'),
    [],
  );
});

t.test('a syntax error in the spec linted is its one finding, with the line', async (t) => {
  const dir = t.testdir({ 'broken.yaml': BROKEN, 'README.md': fixture('README.md') });
  const findings = await lintSpec(join(dir, 'broken.yaml'));
  t.equal(findings.length, 1);
  t.match(
    formatFinding(findings[0]!),
    new RegExp(`^${rel(join(dir, 'broken.yaml')).replace(/[.]/g, '\\.')}: error yaml/syntax: YAML syntax error at line 4: [^\\n]+$`),
  );
});
