import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTERFACES } from '../lib/spec-catalog.ts';

// The hostile-input cases live in this folder, one file per area, each test named `<case id>: <what it proves>`.
// docs/security.md (section "What hostile input gets") lists every case with what it gets. This test keeps the two in step, so a case
// cannot be dropped (or renamed) by a later change without the table saying so, and the table names no case
// that no test proves.

const ROOT = new URL('../../', import.meta.url).pathname;
const HERE = 'src/hostile';
// A case is named after its interface's letter (from the specs), or P for the request path every role shares.
const LETTERS = `[${INTERFACES.map((i) => i.letter).join('')}P]`;
const CASE_ID = new RegExp(`^${LETTERS}-[a-z0-9]+(?:-[a-z0-9]+)*$`);
const DECLARED = new RegExp(`\\bt\\.test\\(\\s*(['"\`])(${LETTERS}-[a-z0-9-]+):`, 'g');

/** Case ids declared by the tests of this folder, with the file each is in. */
export function casesInTests(files: Array<{ path: string; text: string }>): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { path, text } of files) {
    for (const m of text.matchAll(DECLARED)) {
      const id = m[2]!;
      found.set(id, [...(found.get(id) ?? []), path]);
    }
  }
  return found;
}

/** Rows of the security table in docs/security.md: each case id named in its last column, with the file named beside it. */
export function casesInReadme(readme: string): Map<string, string> {
  const section = /\n## What hostile input gets\n([\s\S]*?)(?=\n## |$)/.exec(readme)?.[1] ?? '';
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.split('|').map((c) => c.trim());
    const last = cells[cells.length - 2] ?? '';
    const file = /`(src\/hostile\/[\w.-]+\.test\.ts)`/.exec(last)?.[1];
    for (const m of last.matchAll(/`([^`]+)`/g)) {
      if (CASE_ID.test(m[1]!)) rows.set(m[1]!, file ?? '');
    }
  }
  return rows;
}

const files = readdirSync(join(ROOT, HERE))
  .filter((name) => name.endsWith('.test.ts') && name !== 'catalog.test.ts')
  .map((name) => ({ path: `${HERE}/${name}`, text: readFileSync(join(ROOT, HERE, name), 'utf8') }));
const inTests = casesInTests(files);
const inReadme = casesInReadme(readFileSync(join(ROOT, 'docs/security.md'), 'utf8'));

t.test('the folder holds hostile cases, each id used once', async (t) => {
  t.ok(inTests.size >= 20, `${inTests.size} cases found`);
  for (const [id, where] of inTests) t.equal(where.length, 1, `${id} is declared once (${where.join(', ')})`);
});

t.test('every case in the tests is in the security table of docs/security.md, with its file', async (t) => {
  for (const [id, where] of inTests) {
    t.ok(inReadme.has(id), `${id} (${where[0]}) is listed in docs/security.md, section What hostile input gets`);
    if (inReadme.has(id)) t.equal(inReadme.get(id), where[0], `${id}: the table names the file it is in`);
  }
});

t.test('every case docs/security.md names is a test here', async (t) => {
  for (const id of inReadme.keys()) t.ok(inTests.has(id), `${id}, named in docs/security.md, is a test in ${HERE}/`);
});

t.test('the parsers find what they must and nothing else', async (t) => {
  const tests = casesInTests([
    { path: 'a', text: "t.test('C-one: x', ...); t.test(\"P-two-three: y\", ...); t.test('no id here', ...); t.test('Z-bad: z')" },
  ]);
  t.same([...tests.keys()], ['C-one', 'P-two-three']);
  const readme =
    '# x\n## What hostile input gets\n| a | b | `src/hostile/x.test.ts` `C-one`, `P-two` |\n| not | a | `C-Upper` |\n## Next\n| a | b | `src/hostile/y.test.ts` `C-later` |\n';
  t.same(
    [...casesInReadme(readme).entries()],
    [
      ['C-one', 'src/hostile/x.test.ts'],
      ['P-two', 'src/hostile/x.test.ts'],
    ],
  );
});
