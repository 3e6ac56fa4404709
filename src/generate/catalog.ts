// generated/interfaces.gen.ts: the interfaces as the specs name them (readSpecCatalog), written as a
// constant so that src/lib/spec-catalog.ts has their names as a type and reads no YAML to know them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CatalogEntry } from '../lib/spec-catalog.ts';

export const CATALOG_FILE = 'interfaces.gen.ts';

/** The text of generated/interfaces.gen.ts for `entries` (in their order: by letter). */
export function renderCatalog(entries: readonly CatalogEntry[]): string {
  const lines = entries.map(
    (e) => `  { name: ${JSON.stringify(e.name)}, letter: ${JSON.stringify(e.letter)}, title: ${JSON.stringify(e.title)} },`,
  );
  return [
    '// Written by `npm run generate` (src/generate/catalog.ts) from the OpenAPI documents of specs/: the file',
    '// name, info.x-interface and info.title of each. Never edit it: add or change a spec and regenerate.',
    '',
    'export const INTERFACES = [',
    ...lines,
    '] as const;',
    '',
  ].join('\n');
}

export function writeCatalog(outRoot: string, entries: readonly CatalogEntry[]): void {
  writeFileSync(join(outRoot, CATALOG_FILE), renderCatalog(entries));
}
