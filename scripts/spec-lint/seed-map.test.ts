import t from 'tap';
import { readFileSync } from 'node:fs';
import { INTERFACES, loadSpec, type InterfaceName } from '../../src/lib/spec-catalog.ts';
import { getAtPointer } from '../../src/lib/contract/json-pointer.ts';

// specs/README.md maps every statement of the seed to spec elements; a pointer that no longer
// resolves means a spec changed without its row.
const readme = readFileSync(new URL('../../specs/README.md', import.meta.url), 'utf8');
const docs = new Map(INTERFACES.map((i) => [`${i.name}.yaml`, loadSpec(i.name as InterfaceName)]));

t.test('every spec pointer in the seed table of specs/README.md resolves', async (t) => {
  const references = [...readme.matchAll(/([a-z-]+\.yaml)#(\/[^\s,;)`|]*)/g)];
  t.ok(references.length > 300, `the table has its references (${references.length})`);
  const broken = references
    .filter(([, file, pointer]) => getAtPointer(docs.get(file!), pointer!.replace(/\.$/, '')) === undefined)
    .map(([ref]) => ref);
  t.same(broken, [], 'no broken references');
});

t.test('the seed table has rows for every interface in every section the seed has', async (t) => {
  for (const section of [
    'Resources and their fields',
    'States and transitions',
    'Endpoints',
    'Authentication',
    'Errors',
    'Limits',
    'Versioning',
  ]) {
    t.match(readme, new RegExp(`### ${section}\\n`), `section ${section}`);
  }
  for (const letter of 'ABCDEFGH') t.match(readme, new RegExp(`\\n\\| ${letter} \\| `), `rows for interface ${letter}`);
});
