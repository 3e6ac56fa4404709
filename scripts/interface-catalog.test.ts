// The specs are the list of interfaces (src/lib/spec-catalog.ts): adding one is its spec, its module folder
// and its line in src/app/modules.ts. This test says, one line each, what else is out of step with specs/.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODULES } from '../src/app/modules.ts';
import { INTERFACES, readSpecCatalog } from '../src/lib/spec-catalog.ts';
import { readReleaseFloors } from '../src/spec-diff/releases.ts';
import { catalogGaps, sdkExports, type CatalogFacts } from './interface-catalog.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const catalog = readSpecCatalog();
const facts: CatalogFacts = {
  specs: catalog.entries,
  generated: INTERFACES.map((i) => i.name),
  modules: MODULES.map((m) => m.name),
  exports: (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports,
  floors: [...readReleaseFloors(join(ROOT, 'specs', 'releases.yaml')).keys()],
};

t.test('every spec of specs/ has a usable name and a letter of its own', async (t) => {
  t.same(catalog.problems, [], 'no catalog problems');
  t.ok(catalog.entries.length >= 8, `the specs are found (${catalog.entries.map((e) => e.name).join(', ')})`);
  t.notOk(
    catalog.entries.some((e) => e.name === 'releases'),
    'specs/releases.yaml (release data, not an OpenAPI document) is no interface',
  );
});

t.test('the generated catalog, MODULES, the SDK exports and the release floors follow specs/', async (t) => {
  t.same(catalogGaps(facts), [], 'nothing to add or remove');
});

t.test('each gap is named with what to add or remove where', async (t) => {
  const spec = { name: 'tides', version: '1.0.0' };
  const added = { ...facts, specs: [...facts.specs, spec] };
  t.same(catalogGaps(added), [
    "generated/interfaces.gen.ts lacks 'tides' (specs/tides.yaml): run `npm run generate`",
    "src/app/modules.ts: add the module of 'tides' to MODULES (src/interfaces/tides/module.ts: defineModule({ name: 'tides', ... }))",
    `package.json exports: add (or correct) "./sdk/tides": ${JSON.stringify(sdkExports('tides')['./sdk/tides'])}`,
    `package.json exports: add (or correct) "./sdk/tides/client": ${JSON.stringify(sdkExports('tides')['./sdk/tides/client'])}`,
    'specs/releases.yaml: add under specs: "tides: { version: \'1.0.0\', commit: <the commit that releases specs/tides.yaml at 1.0.0> }"',
  ]);
  const complete = {
    specs: added.specs,
    generated: [...facts.generated, 'tides'],
    modules: [...facts.modules, 'tides'],
    exports: { ...facts.exports, ...sdkExports('tides') },
    floors: [...facts.floors, 'tides'],
  };
  t.same(catalogGaps(complete), [], 'all five in place: no gap');
  t.same(
    catalogGaps({ ...complete, specs: facts.specs }),
    [
      "generated/interfaces.gen.ts lists 'tides', which has no spec in specs/ any more: run `npm run generate`",
      "src/app/modules.ts: MODULES has 'tides', which has no spec: add specs/tides.yaml, or remove the module",
      'package.json exports: remove "./sdk/tides" (no spec in specs/ has that name)',
      'package.json exports: remove "./sdk/tides/client" (no spec in specs/ has that name)',
      "specs/releases.yaml: remove the floor of 'tides' (no spec in specs/ has that name)",
    ],
    'a spec removed: everything that still names it',
  );
});

t.test('the catalog of a specs folder: OpenAPI documents only, letters single capitals used once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-catalog-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const spec = (letter: string, title: string) =>
    `openapi: 3.1.0\ninfo:\n  title: ${title}\n  version: 2.0.0\n  x-interface: ${letter}\npaths: {}\n`;
  writeFileSync(join(dir, 'tides.yaml'), spec('T', 'Tide tables'));
  writeFileSync(join(dir, 'anchors.yaml'), spec('B', 'Anchorages'));
  writeFileSync(join(dir, 'releases.yaml'), 'specs: {}\n');
  t.same(readSpecCatalog(dir), {
    entries: [
      { name: 'anchors', letter: 'B', title: 'Anchorages', version: '2.0.0', path: join(dir, 'anchors.yaml') },
      { name: 'tides', letter: 'T', title: 'Tide tables', version: '2.0.0', path: join(dir, 'tides.yaml') },
    ],
    problems: [],
  });
  writeFileSync(join(dir, 'currents.yaml'), spec('T', 'Currents'));
  writeFileSync(join(dir, 'Soundings.yaml'), spec('sd', 'Soundings'));
  t.same(readSpecCatalog(dir).problems, [
    "specs/Soundings.yaml: rename it to lower-case words joined by '-' (the name becomes a folder and a package subpath)",
    "specs/Soundings.yaml: info.x-interface must be one capital letter A-Z (found 'sd')",
    "specs/currents.yaml and specs/tides.yaml: the same info.x-interface 'T'; give all but one an unused letter (A, C, ...)",
  ]);
});
