// Regenerates generated/<interface>/ from specs/<interface>.yaml: with @hey-api/openapi-ts, types
// (types.gen.ts), an SDK (sdk.gen.ts) and a fetch client per interface; and the compiled contract the
// server and the MSW handlers load at start (contract.gen.json: the document and its dereferenced form,
// with the hash of the spec it came from; see src/server/compiled-contract.ts).
// `npm run generate [-- <interface> ...]`. Never edit generated/ by hand: the tests fail when it
// differs from a fresh generation, and a start fails when a spec changed since its contract was compiled.
import { createClient } from '@hey-api/openapi-ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { INTERFACES, specPath, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { compileContract, contractPath, serializeContract } from '../src/server/compiled-contract.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Generates the SDK and the compiled contract of each named interface (all by default) under `outRoot/<interface>`. */
export async function generate(outRoot = `${root}generated`, names: readonly string[] = []): Promise<InterfaceName[]> {
  const chosen = INTERFACES.filter((i) => names.length === 0 || names.includes(i.name)).map((i) => i.name);
  for (const name of chosen) {
    await createClient({
      input: specPath(name),
      output: {
        path: `${outRoot}/${name}`,
        clean: true,
        module: { extension: '.ts' },
        tsConfigPath: `${root}tsconfig.json`,
      },
      logs: { level: 'silent' },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    });
    // After the SDK: its `clean` empties the directory first.
    const contract = await compileContract(name, readFileSync(specPath(name), 'utf8'));
    writeFileSync(contractPath(name, `${outRoot}/`), serializeContract(contract));
  }
  return chosen;
}

if (import.meta.main) {
  const unknown = process.argv.slice(2).filter((n) => !INTERFACES.some((i) => i.name === n));
  if (unknown.length > 0) {
    console.error(`Unknown interface(s): ${unknown.join(', ')}. Known: ${INTERFACES.map((i) => i.name).join(', ')}`);
    process.exit(2);
  }
  for (const name of await generate(undefined, process.argv.slice(2))) console.log(`generated/${name}`);
}
