// Regenerates generated/ from specs/ (`npm run generate [-- <interface> ...]`, `portolan generate`): per
// interface, with @hey-api/openapi-ts, its types (types.gen.ts) and SDK (sdk.gen.ts, client.gen.ts) on the
// one fetch client runtime they share (generated/sdk-runtime/, see sdk.ts), and the compiled contract the
// server and the MSW handlers load at start (contract.gen.json: the document and its dereferenced form,
// with the hash of the spec it came from; see src/server/compiled-contract.ts); and the catalog of the
// interfaces (interfaces.gen.ts, see catalog.ts). Never edit generated/ by hand: the tests fail when it
// differs from a fresh generation, and a start fails when a spec changed since its contract was compiled.
//
// Checkout-only: it needs the devDependency @hey-api/openapi-ts, and the package does not ship it
// (package.json `files`); `portolan generate` says so when it is missing.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSpecCatalog, SPECS_DIR, type CatalogEntry } from '../lib/spec-catalog.ts';
import { compileContract, contractPath, GENERATED_DIR, serializeContract } from '../server/compiled-contract.ts';
import { writeCatalog } from './catalog.ts';

export { readSpecCatalog, SPECS_DIR };
import { generateSdk, generateSdkRuntime } from './sdk.ts';

/** The interfaces generation knows: the specs of specs/ (a new one too, before its first generation). */
export function specCatalog(specsDir = SPECS_DIR): CatalogEntry[] {
  const { entries, problems } = readSpecCatalog(specsDir);
  if (problems.length > 0) throw new Error(`generate: specs/ needs fixing first:\n${problems.join('\n')}`);
  return entries;
}

/**
 * Generates the catalog, the shared client runtime, and the SDK and compiled contract of each named
 * interface (all by default) under `outRoot`, from the specs of `specsDir`; resolves to the names generated.
 *
 * @example
 * await generate(GENERATED_DIR, ['mapping']); // ['mapping']
 */
export async function generate(outRoot = GENERATED_DIR, names: readonly string[] = [], specsDir = SPECS_DIR): Promise<string[]> {
  const catalog = specCatalog(specsDir);
  const chosen = catalog.filter((e) => names.length === 0 || names.includes(e.name));
  mkdirSync(outRoot, { recursive: true });
  writeCatalog(outRoot, catalog);
  await generateSdkRuntime(outRoot);
  for (const { name, path: specFile } of chosen) {
    await generateSdk(specFile, join(outRoot, name));
    // After the SDK: hey-api's `clean` empties the folder first.
    const contract = await compileContract(name, readFileSync(specFile, 'utf8'));
    writeFileSync(contractPath(name, join(outRoot, '/')), serializeContract(contract));
  }
  return chosen.map((e) => e.name);
}
