// The "designed without x-origin" rule: an element the seed table does not reach and that carries no
// x-origin: designed (on itself or on what it is reached through) is a finding naming its pointer.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { checkOrigin } from './origin.ts';
import { seedPointers } from './seed-trace.ts';
import { lintSpec } from './lint.ts';

const fixture = (name: string) => fileURLToPath(new URL(`fixtures/origin/${name}`, import.meta.url));
const doc = parse(readFileSync(fixture('things.yaml'), 'utf8')) as Record<string, unknown>;
const readme = readFileSync(fixture('README.md'), 'utf8');
const seed = () => seedPointers(readme, new Map([['things.yaml', doc]])).get('things.yaml') ?? new Set<string>();
const pointers = (s: ReadonlySet<string>) => checkOrigin(doc, 'things.yaml', s).map((f) => f.pointer);

t.test('the seed table is read: pointers, continuations, operations with their statuses; designed cells are not seed', async (t) => {
  t.same([...seed()].sort(), [
    '/components/schemas/Thing/properties/colour',
    '/components/schemas/Thing/properties/name',
    '/components/schemas/Thing/properties/size',
    '/paths/~1things~1{id}/get',
    '/paths/~1things~1{id}/get/responses/200',
  ]);
});

t.test('unmarked designed elements are flagged by pointer; seed and marked ones are not', async (t) => {
  t.same(pointers(seed()), ['/components/schemas/Thing/properties/note', '/paths/~1things~1{id}/get/responses/410']);
  const [finding] = checkOrigin(doc, 'things.yaml', seed());
  t.equal(
    finding?.message,
    'property note is not in the seed table of specs/README.md and has no x-origin: designed (mark it, or add its seed row)',
  );
});

t.test('marking the element, or a seed row naming it, clears the finding', async (t) => {
  const marked = structuredClone(doc) as { components: { schemas: { Thing: { properties: { note: Record<string, unknown> } } } } };
  marked.components.schemas.Thing.properties.note['x-origin'] = 'designed';
  t.same(
    checkOrigin(marked, 'things.yaml', seed()).map((f) => f.pointer),
    ['/paths/~1things~1{id}/get/responses/410'],
  );
  t.same(pointers(new Set([...seed(), '/paths/~1things~1{id}/get/responses/410', '/components/schemas/Thing/properties/note'])), []);
});

t.test('a seed pointer naming a whole schema does not vouch for its properties; one inside a property does', async (t) => {
  const wholeSchema = new Set([
    '/paths/~1things~1{id}/get',
    '/paths/~1things~1{id}/get/responses/200',
    '/paths/~1things~1{id}/get/responses/410',
    '/components/schemas/Thing',
  ]);
  t.same(pointers(wholeSchema), [
    '/components/schemas/Thing/properties/name',
    '/components/schemas/Thing/properties/size',
    '/components/schemas/Thing/properties/colour',
    '/components/schemas/Thing/properties/note',
  ]);
  const inside = new Set([...wholeSchema, '/components/schemas/Thing/properties/name/maxLength']);
  t.notOk(pointers(inside).includes('/components/schemas/Thing/properties/name'), 'a descendant pointer reaches its property');
});

t.test('without any seed row everything unmarked is flagged, the operation first', async (t) => {
  t.same(pointers(new Set()).slice(0, 2), ['/paths/~1things~1{id}/get', '/paths/~1things~1{id}/get/responses/200']);
});

t.test('npm run lint:specs reports the rule through lintSpec, with the README beside the spec', async (t) => {
  const findings = (await lintSpec(fixture('things.yaml'))).filter((f) => f.tool === 'origin');
  t.same(
    findings.map((f) => `${f.rule} ${f.pointer}`),
    [
      'designed-without-origin /components/schemas/Thing/properties/note',
      'designed-without-origin /paths/~1things~1{id}/get/responses/410',
    ],
  );
});
