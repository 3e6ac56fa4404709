import t from 'tap';
import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { ERROR_CODES, portolanError, type ErrorCode } from '../lib/errors.ts';
import { INTERFACES, loadSpec } from '../lib/spec-catalog.ts';
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { createFakeClock } from '../lib/clock.ts';
import type { ErrorRenderer } from '../server/role-app.ts';
import { MODULES } from './modules.ts';

const clock = createFakeClock();
const renderers = Object.fromEntries(MODULES.map((m) => [m.name, m.errorShape(clock)])) as Record<string, ErrorRenderer>;
const codes = Object.keys(ERROR_CODES) as ErrorCode[];

for (const { name } of INTERFACES) {
  t.test(`every registry code renders in ${name}'s own error schema with the code's status`, async (t) => {
    const doc = loadSpec(name);
    // An interface may declare more than one error schema (F: the device REST's, and the declarative
    // extension's for its own codes); every code renders in one of them.
    const schemaNames = doc['x-portolan-error-schemas'] as string[];
    const validators = schemaNames.map((schemaName) => createSpecValidator(doc).at(`/components/schemas/${schemaName}`));
    for (const code of codes) {
      const response = renderers[name]!(portolanError(code), { headers: { accept: 'application/vnd.vendor.diagnostics.api+json' } });
      t.equal(response.status, ERROR_CODES[code].status, `${code} status`);
      const valid = validators.some((validate) => validate(response.body));
      t.ok(valid, `${code} renders in one of ${schemaNames.join(', ')}: ${JSON.stringify(validators[0]!.errors)}`);
    }
  });
}

t.test('the diagnostics API renders errors as XML unless JSON is asked for', async (t) => {
  const asXml = renderers.snapshots!(portolanError('notFound', 'Snapshot 7 was not found & gone.'), { headers: {} });
  t.equal(asXml.contentType, 'application/vnd.vendor.diagnostics.api+xml');
  t.same(new XMLParser().parse(String(asXml.body)), { error: { code: 404, message: 'Snapshot 7 was not found & gone.' } });
  const asJson = renderers.snapshots!(portolanError('notFound'), { headers: { accept: 'application/vnd.vendor.diagnostics.api+json' } });
  t.equal(asJson.contentType, 'application/vnd.vendor.diagnostics.api+json');
});

t.test("the device REST keeps the real product's apiError numbers", async (t) => {
  t.match(renderers['device-config']!(portolanError('malformedBody'), { headers: {} }).body, {
    code: 400,
    message: 'Found invalid JSON body in the request.',
    errorStack: [],
    apiError: 1,
  });
  t.match(renderers['device-config']!(portolanError('invalidRequest'), { headers: {} }).body, { apiError: 26214401 });
});

t.test('every error code is documented in docs/errors.md with its status', async (t) => {
  const readme = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const code of codes) t.match(readme, new RegExp(`\\| \`${code}\` \\| ${ERROR_CODES[code].status} \\|`), `${code} documented`);
});
