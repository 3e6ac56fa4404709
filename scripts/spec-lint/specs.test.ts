import t from 'tap';
import { fileURLToPath } from 'node:url';
import { INTERFACES, listOperations, loadSpec, specPath } from '../../src/lib/spec-catalog.ts';
import { ROLE_NAMES } from '../../src/lib/roles.ts';
import { lintSpec } from './lint.ts';
import { formatFinding } from './findings.ts';

for (const { name } of INTERFACES) {
  t.test(`specs/${name}.yaml is valid, lints clean and every example matches its schema`, async (t) => {
    const findings = await lintSpec(specPath(name));
    t.same(findings.map(formatFinding), [], 'no findings');
  });
}

t.test('operationIds are unique across all specs and every operation is served on a known role', async (t) => {
  const seen = new Map<string, string>();
  for (const { name } of INTERFACES) {
    for (const op of listOperations(loadSpec(name))) {
      t.notOk(seen.has(op.operationId), `${op.operationId} (${name}) is not also in ${seen.get(op.operationId)}`);
      seen.set(op.operationId, name);
      t.ok(
        op.roles.length > 0 && op.roles.every((r) => (ROLE_NAMES as string[]).includes(r)),
        `${op.operationId} has roles ${op.roles.join(', ')}`,
      );
    }
  }
});

t.test('the linter catches a broken spec and names each problem', async (t) => {
  const findings = await lintSpec(fileURLToPath(new URL('fixtures/broken.yaml', import.meta.url)));
  const rules = new Set(findings.map((f) => `${f.tool}/${f.rule}`));
  t.ok(rules.has('spectral/portolan-error-schema'), 'a 404 without the error schema');
  t.ok(rules.has('spectral/oas3-unused-component'), 'an unused component');
  t.ok(rules.has('examples/example-invalid'), 'an example that breaks its schema');
  t.ok(rules.has('examples/named-examples'), 'an error response without a named example');
  t.ok(rules.has('spectral/portolan-interface-letter'), 'an info.x-interface that is not one capital letter');
  const invalid = findings.find((f) => f.rule === 'example-invalid');
  t.equal(
    invalid?.pointer,
    '/paths/~1api~1charts~1{chartId}/get/responses/200/content/application~1json/examples/one',
    'the finding points at the example',
  );
});
