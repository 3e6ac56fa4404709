// Regenerates generated/<interface>/ from specs/<interface>.yaml with @hey-api/openapi-ts:
// types (types.gen.ts), an SDK (sdk.gen.ts) and a fetch client per interface.
// `npm run generate [-- <interface> ...]`. Never edit generated/ by hand: the tests fail when it
// differs from a fresh generation.
import { createClient } from '@hey-api/openapi-ts';
import { fileURLToPath } from 'node:url';
import { INTERFACES, specPath, type InterfaceName } from '../src/lib/spec-catalog.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Generates the SDK of each named interface (all by default) under `outRoot/<interface>`. */
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
