// The SDK of one interface with @hey-api/openapi-ts (types.gen.ts, sdk.gen.ts, client.gen.ts, index.ts),
// and the one fetch client runtime every SDK shares (generated/sdk-runtime/: hey-api's client and core
// modules, ~1.9k lines, once instead of once per SDK).
//
// How the SDKs share it: a custom client plugin, built as hey-api's own custom-client package builds one
// (clientDefaultMeta, clientDefaultConfig, clientPluginHandler), with `bundle: false`: the generated code
// then imports the client from the plugin's *name* instead of copying the runtime into every output. The name is
// './client/index.ts', so sdk.gen.ts and client.gen.ts import exactly what they imported when the runtime
// was bundled, and generated/<interface>/client/index.ts (the package's ./sdk/<interface>/client entry,
// which tests and code import) is one line re-exporting generated/sdk-runtime/client/index.ts. The
// runtime itself is hey-api's own bundle (`bundle: true`, the built-in @hey-api/client-fetch) of an
// empty document, generated aside: its client/ and core/ folders are copied as hey-api writes them.
import { createClient, clientDefaultConfig, clientDefaultMeta, clientPluginHandler, definePluginConfig } from '@hey-api/openapi-ts';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TSCONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url));

/** The folder of generated/ that holds the shared runtime (its client/ and core/). */
export const RUNTIME_FOLDER = 'sdk-runtime';

/** Where the generated code imports the client from, relative to generated/<interface>/. */
const CLIENT_MODULE = './client/index.ts';

// Option values are hey-api's own (typed by its Client.Config). The plugin *name* is the module the SDK
// imports the client from; hey-api's types allow only its own plugin names there, hence the one cast.
const sharedFetchClient = definePluginConfig({
  ...clientDefaultMeta,
  config: {
    ...clientDefaultConfig,
    bundle: false,
    throwOnError: false,
    // A plugin named by a path would put the `client` instance in './client/index.ts.gen.ts': keep it in
    // client.gen.ts, where the built-in fetch client puts it.
    $hooks: { symbols: { getFilePath: () => 'client' } },
  },
  handler: clientPluginHandler,
  name: CLIENT_MODULE as never,
  symbolMeta: () => ({ artifact: 'client' }),
});

const output = (path: string) => ({ path, clean: true, module: { extension: '.ts' }, tsConfigPath: TSCONFIG });

/** generated/<interface>/ from its spec: hey-api's SDK on the shared client, and the client entry re-exporting it. */
export async function generateSdk(specFile: string, outDir: string): Promise<void> {
  await createClient({
    input: specFile,
    output: output(outDir),
    logs: { level: 'silent' },
    plugins: [sharedFetchClient(), '@hey-api/typescript', '@hey-api/sdk'],
  });
  mkdirSync(join(outDir, 'client'), { recursive: true });
  writeFileSync(
    join(outDir, 'client', 'index.ts'),
    `// Written by \`npm run generate\` (src/generate/sdk.ts): every SDK uses the one client runtime.\n\nexport * from '../../${RUNTIME_FOLDER}/client/index.ts';\n`,
  );
}

/** generated/sdk-runtime/{client,core}/: hey-api's fetch client bundle, as it writes it beside an SDK. */
export async function generateSdkRuntime(outRoot: string): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'portolan-sdk-runtime-'));
  try {
    await createClient({
      input: { path: { openapi: '3.1.0', info: { title: 'runtime', version: '0' }, paths: {} } },
      output: output(scratch),
      logs: { level: 'silent' },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript'],
    });
    const runtime = join(outRoot, RUNTIME_FOLDER);
    rmSync(runtime, { recursive: true, force: true });
    for (const folder of ['client', 'core']) cpSync(join(scratch, folder), join(runtime, folder), { recursive: true });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
