// The npm packages as a user gets them.
//
// The full package: `npm pack` (its prepack runs the build, scripts/build.ts), the tarball installed into a
// scratch project, then, from there and on this Node 24: every `exports` entry imported through Node's own
// resolution and type-checked with tsc, every data file the compiled code reads at run time read through
// that code, `portolan --help`, and one real start of the reference system from the installed bin, which
// processes a snapshot and checks a large declaration on the worker threads whose entry files must resolve
// inside dist/.
//
// The small packages of packages/ (@portolan/sdk-<interface>, @portolan/mocks, @portolan/conformance): each
// packed (`npm pack -w`, from the build above) and installed alone into an empty project from its tarball
// (its dependencies from the registry): its installed size, no server dependency and no install script,
// then one real use from a plain .mjs on the oldest Node at hand that its engines allow (the machine's
// own Node when it qualifies, else this one): an SDK call against a small local server, the MSW handlers
// answering through msw/node's setupServer, a conformance run against two stubs. Their READMEs are in the
// tarballs and their TypeScript examples compile against the installed packages.
//
// And the checkout: after `npm ci`, `npx portolan` runs the checkout's own command.
//
// Slow (two builds, eleven packs, a dozen installs from the npm cache or the registry): hence the longer timeout.
import t, { type Test } from 'tap';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  globSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { list } from 'tar';
import { loadRuleSetFile } from '../src/interfaces/snapshots/engine/rule-set.ts';
import { loadSample } from '../src/interfaces/snapshots/sample.ts';
import { INTERFACES } from '../src/lib/spec-catalog.ts';
import { PACKAGES_DIR, packagePlans, runtimeAssetFiles } from './build.ts';

t.setTimeout(600_000);

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; default: string }>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
// npm, its lifecycle scripts and the installed bin's `#!/usr/bin/env node` all run on this Node (24).
const env = { ...process.env, PATH: [dirname(process.execPath), join(ROOT, 'node_modules', '.bin'), process.env.PATH].join(delimiter) };
const work = mkdtempSync(join(tmpdir(), 'portolan-package-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
const app = join(work, 'app');
const installed = join(app, 'node_modules', manifest.name);

/** Runs a command to its end; an error line with the end of its output when it fails. */
function run(command: string, args: string[], cwd: string): { ok: true; stdout: string } | { ok: false; error: string } {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status === 0) return { ok: true, stdout: result.stdout };
  const tail = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`.trim().split('\n').slice(-15).join('\n');
  return { ok: false, error: `\`${command} ${args.join(' ')}\` in ${cwd} failed (status ${result.status}):\n${tail}` };
}

/** Runs a script file with this Node in the scratch project and parses the JSON it prints. */
function runScript(name: string, text: string): Record<string, unknown> {
  writeFileSync(join(app, name), text);
  const result = run(process.execPath, [name], app);
  if (!result.ok) throw new Error(result.error);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

// The SDK entries are named after the interface folders of generated/ (each has its compiled contract; the
// client runtime the SDKs share has none), the other entries are fixed.
const sdkKeys = readdirSync(join(ROOT, 'generated'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(ROOT, 'generated', e.name, 'contract.gen.json')))
  .flatMap((e) => [`./sdk/${e.name}`, `./sdk/${e.name}/client`]);
const moduleKeys = Object.keys(manifest.exports).filter((key) => !key.includes('*') && key !== './package.json');
const specNames = INTERFACES.map((i) => i.name);

// Pack (the prepack script builds dist/) and install the tarball into a scratch project, once for every test below.
mkdirSync(app);
writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'portolan-package-test', private: true, type: 'module' })}\n`);
const packed = run('npm', ['pack', '--pack-destination', work], ROOT);
const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
const setup = !packed.ok
  ? packed
  : !tarball
    ? { ok: false as const, error: `npm pack wrote no .tgz into ${work}` }
    : // msw is an optional peer dependency: a user of the mocks installs it beside the package.
      run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          join(work, tarball),
          `msw@${manifest.peerDependencies.msw}`,
        ],
        app,
      );

if (!setup.ok) {
  t.fail(setup.error);
} else {
  const entries: string[] = [];
  await list({ file: join(work, tarball!), onReadEntry: (entry) => void entries.push(entry.path.replace(/^package\//, '')) });

  t.test('the tarball holds the built package and no tests, test fixtures, bench scripts or TypeScript sources', async (t) => {
    t.ok(entries.includes('package.json'), 'package.json');
    t.ok(entries.includes(manifest.bin.portolan!), `the bin ${manifest.bin.portolan}`);
    t.same(
      entries.filter((p) => /\.test\.[cm]?[jt]s$/.test(p)),
      [],
      'no *.test.ts or *.test.js',
    );
    t.same(
      entries.filter((p) => /(^|\/)fixtures\//.test(p)),
      [],
      'no fixtures of tests',
    );
    t.same(
      entries.filter((p) => /(^|\/)bench\//.test(p)),
      [],
      'no bench scripts',
    );
    t.same(
      entries.filter((p) => p.startsWith('dist/scripts/') || p.startsWith('dist/src/generate/')),
      [],
      'no checkout-only scripts or generator (`portolan generate` needs a checkout and says so)',
    );
    t.same(
      entries.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts')),
      [],
      'no .ts sources (Node does not strip types under node_modules)',
    );
    const missing = runtimeAssetFiles().filter((file) => !entries.includes(`dist/${file}`));
    t.same(
      missing,
      [],
      'every data file the code reads at run time sits in dist/ at its source-relative place (scripts/build.ts RUNTIME_ASSETS)',
    );
  });

  t.test('every package the shipped code imports (also lazily) is a dependency or a peer dependency', async (t) => {
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies), manifest.name]);
    const imported = new Map<string, string>();
    for (const file of globSync('dist/**/*.js', { cwd: installed })) {
      const text = readFileSync(join(installed, file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import\(|require\(|require\.resolve\()\s*['"]([^'"./][^'"]*)['"]/g)) {
        if (specifier!.startsWith('node:') || !/^(@[\w.-]+\/)?[\w.-]+(\/\S*)?$/.test(specifier!)) continue;
        imported.set(
          specifier!
            .split('/')
            .slice(0, specifier!.startsWith('@') ? 2 : 1)
            .join('/'),
          file,
        );
      }
    }
    t.ok(imported.size > 5, 'the scan found the imports', { found: [...imported.keys()] });
    const undeclared = [...imported].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    t.same(undeclared, [], 'none is missing from dependencies / peerDependencies (a devDependency is not installed for users)');
  });

  t.test('package.json exports an SDK per interface, the mocks, the conformance engine and the specs, all into dist/', async (t) => {
    t.same(
      Object.keys(manifest.exports)
        .filter((k) => k.startsWith('./sdk/'))
        .sort(),
      [...sdkKeys].sort(),
      './sdk/<interface> and ./sdk/<interface>/client (createClient) per folder of generated/',
    );
    t.same(
      INTERFACES.map((i) => `./sdk/${i.name}`).filter((k) => !sdkKeys.includes(k)),
      [],
      'every interface of src/lib/spec-catalog.ts has an SDK folder',
    );
    t.ok(
      manifest.exports['./mocks'] && manifest.exports['./conformance'] && manifest.exports['./specs/*.yaml'],
      './mocks, ./conformance and ./specs/*.yaml',
    );
    for (const key of moduleKeys) {
      const target = manifest.exports[key]!;
      t.ok(
        typeof target === 'object' && target.types.startsWith('./dist/') && target.default.startsWith('./dist/'),
        `${key}: types and default conditions into dist/`,
      );
      if (typeof target === 'object')
        t.same(
          [target.types, target.default].filter((f) => !entries.includes(f.slice(2))),
          [],
          `${key}: its files are in the tarball`,
        );
    }
  });

  t.test("every export imports from the installed package with Node's own resolution", async (t) => {
    const result = runScript(
      'imports.mjs',
      `
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const out = {};
for (const specifier of ${JSON.stringify(moduleKeys.map((k) => `${manifest.name}${k.slice(1)}`))}) {
  try { out[specifier] = Object.keys(await import(specifier)).sort(); } catch (error) { out[specifier] = 'error: ' + error.message.split('\\n')[0]; }
}
for (const specifier of ${JSON.stringify(specNames.map((n) => `${manifest.name}/specs/${n}.yaml`))}) {
  try {
    const file = fileURLToPath(import.meta.resolve(specifier));
    out[specifier] = existsSync(file) && /^openapi: /m.test(readFileSync(file, 'utf8')) ? 'an OpenAPI document' : 'error: ' + file + ' is missing or no OpenAPI document';
  } catch (error) { out[specifier] = 'error: ' + error.message.split('\\n')[0]; }
}
console.log(JSON.stringify(out));
`,
    );
    for (const key of moduleKeys) {
      const names = result[`${manifest.name}${key.slice(1)}`];
      t.ok(Array.isArray(names) && names.length > 0, `${manifest.name}${key.slice(1)} imports and has named exports`, { found: names });
    }
    t.ok((result['portolan/conformance'] as string[]).includes('runConformance'), 'portolan/conformance exports runConformance');
    t.ok((result['portolan/mocks'] as string[]).includes('createStatefulHandlers'), 'portolan/mocks exports createStatefulHandlers');
    t.ok((result['portolan/sdk/mapping/client'] as string[]).includes('createClient'), 'portolan/sdk/mapping/client exports createClient');
    for (const name of specNames)
      t.equal(
        result[`${manifest.name}/specs/${name}.yaml`],
        'an OpenAPI document',
        `${manifest.name}/specs/${name}.yaml resolves to the spec`,
      );
  });

  t.test('every export has declarations: tsc --noEmit over a file importing each one passes', async (t) => {
    const imports = moduleKeys.map((key, i) => `import * as entry${i} from '${manifest.name}${key.slice(1)}';`);
    writeFileSync(
      join(app, 'types.ts'),
      [
        ...imports,
        `import type { ConformanceOptions, RunResult } from '${manifest.name}/conformance';`,
        `import { runConformance } from '${manifest.name}/conformance';`,
        'export const run: (options: ConformanceOptions) => Promise<RunResult> = runConformance;',
        `export const entries = [${moduleKeys.map((_, i) => `entry${i}`).join(', ')}];`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2024',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files: ['types.ts'],
      }),
    );
    const checked = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
    t.ok(checked.ok, 'tsc passes', checked.ok ? {} : { error: checked.error });
  });

  t.test('the data files the code reads at run time are found from the installed dist/', async (t) => {
    // Each line reads its files through the module that reads them in the server, the engine or the CLI.
    const result = runScript(
      'assets.mjs',
      `
const dist = new URL('./node_modules/${manifest.name}/dist/', import.meta.url);
const load = (path) => import(new URL(path, dist));
const out = {};
const check = async (name, fn) => { try { out[name] = await fn(); } catch (error) { out[name] = 'error: ' + error.message.split('\\n')[0]; } };
const { INTERFACES } = await load('src/lib/spec-catalog.js');
const { readCompiledContract } = await load('src/server/compiled-contract.js');
for (const { name } of INTERFACES) await check('contract ' + name, () => readCompiledContract(name).format ? 'ok' : 'no format');
const { loadRuleSetFile } = await load('src/interfaces/snapshots/engine/rule-set.js');
const rules = await loadRuleSetFile();
out['snapshot rules'] = rules.ok ? 'ok' : 'error: ' + rules.message;
const { loadSample } = await load('src/interfaces/snapshots/sample.js');
let sampleOutput;
if (rules.ok) await check('sample snapshot', async () => ((sampleOutput = (await loadSample(rules.ruleSet)).output) ? 'ok' : 'no output'));
const data = await load('conformance/data-files.js');
for (const loader of ['loadOperationData', 'loadVariables', 'loadUnreachable', 'loadAuthData']) await check('conformance ' + loader, () => (data[loader]() ? 'ok' : 'empty'));
const conformance = await import('${manifest.name}/conformance');
await check('conformance scenarios', () => (conformance.loadScenarios().length > 0 ? 'ok' : 'none'));
await check('prism known failures', () => (conformance.loadKnownFailures(conformance.PRISM_KNOWN_FAILURES).length > 0 ? 'ok' : 'none'));
console.log(JSON.stringify({ out, sampleOutput }));
`,
    ) as { out: Record<string, string>; sampleOutput: unknown };
    t.ok(Object.keys(result.out).length >= INTERFACES.length + 8, 'every check ran', { found: Object.keys(result.out) });
    for (const [name, outcome] of Object.entries(result.out)) t.equal(outcome, 'ok', name);
    // A sample missing some of its files still loads, with other diagnostics: compare with the sources'.
    const rules = await loadRuleSetFile();
    if (rules.ok)
      t.same(
        result.sampleOutput,
        (await loadSample(rules.ruleSet)).output,
        'the sample snapshot has the same diagnostics as in the sources (all its files were copied)',
      );
    else t.fail(rules.message);
  });

  t.test('the installed bin prints its usage', async (t) => {
    const help = run(join(app, 'node_modules', '.bin', 'portolan'), ['--help'], app);
    t.ok(help.ok, 'portolan --help exits 0', help.ok ? {} : { error: help.error });
    if (help.ok) t.match(help.stdout, /^Usage: portolan\b/m, 'prints a usage');
  });

  t.test('the installed bin starts the reference system, which answers /health, and stops on SIGTERM', async (t) => {
    const child = spawn(join(app, 'node_modules', '.bin', 'portolan'), ['start'], {
      cwd: app,
      env: {
        ...env,
        PORTOLAN_ROLES: 'mapping',
        PORTOLAN_MAPPING_PORT: '0',
        PORTOLAN_DATABASE: `sqlite:${join(work, 'p.db')}`,
        PORTOLAN_ADMIN_PASSWORD: 'x',
        PORTOLAN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = once(child, 'exit');
    let url: string | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      url = /^mapping\s+(http:\/\/\S+)/.exec(line)?.[1];
      if (url) break;
    }
    t.ok(url, "prints the mapping role's URL", { stderr });
    if (!url) return;
    const response = await fetch(`${url}/health`);
    t.equal(response.status, 200, `GET ${url}/health answers 200`);
    await response.arrayBuffer();
    child.kill('SIGTERM');
    const [code] = await exited;
    t.equal(code, 0, 'exits 0 on SIGTERM', { stderr });
  });

  t.test('the installed package runs its worker threads: a snapshot is processed, a large declaration is checked', async (t) => {
    const password = 'package worker pw';
    const child = spawn(join(app, 'node_modules', '.bin', 'portolan'), ['start'], {
      cwd: app,
      env: {
        ...env,
        PORTOLAN_ROLES: 'device,diagnostics,login',
        PORTOLAN_DEVICE_PORT: '0',
        PORTOLAN_DIAGNOSTICS_PORT: '0',
        PORTOLAN_LOGIN_PORT: '0',
        PORTOLAN_DATABASE: `sqlite:${join(work, 'workers.db')}`,
        PORTOLAN_SNAPSHOT_DATA_DIR: join(work, 'snapshots'),
        PORTOLAN_DEVICE_DATA_DIR: join(work, 'device'),
        PORTOLAN_ADMIN_PASSWORD: password,
        PORTOLAN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const urls: Record<string, string> = {};
    for await (const line of createInterface({ input: child.stdout })) {
      const [, role, url] = /^(device|diagnostics|login)\s+(http:\/\/\S+)/.exec(line) ?? [];
      if (role) urls[role] = url!;
      if (Object.keys(urls).length === 3) break;
    }
    t.same(Object.keys(urls).sort(), ['device', 'diagnostics', 'login'], "prints the three roles' URLs", { stderr });
    if (Object.keys(urls).length !== 3) return;
    const admin = { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` };

    // The README's cookbook flow: log in, upload the device's own snapshot, poll its Location, read the hits.
    const login = await fetch(`${urls.login}/resource/loginAction.jsp`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ userid: 'admin', passwd: password }),
    });
    await login.arrayBuffer();
    const cookie = login.headers
      .getSetCookie()
      .map((line) => line.split(';', 1)[0])
      .join('; ');
    const archive = await fetch(`${urls.device}/mgmt/shared/diagnostics/snapshot`, { headers: admin });
    t.equal(archive.status, 200, 'the device hands out its snapshot');
    const form = new FormData();
    form.append('snapshot', new Blob([await archive.arrayBuffer()]), 'device.snapshot.tgz');
    const upload = await fetch(`${urls.diagnostics}/snapshot-analyzer/api/snapshots`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie },
      body: form,
    });
    await upload.arrayBuffer();
    const location = upload.headers.get('location');
    t.equal(upload.status, 302, 'the upload is accepted');
    let status = 0;
    // Bounded in polls, each waiting for an answer: a thread whose entry is missing ends the snapshot ERROR (422).
    for (let polls = 0; location && polls < 600; polls++) {
      const read = await fetch(location, { headers: { cookie } });
      await read.arrayBuffer();
      status = read.status;
      if (status !== 202) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.equal(status, 200, 'the snapshot is processed on its worker thread (COMPLETE)', { stderr });
    const hits = await fetch(`${location}/diagnostics?set=hit`, {
      headers: { cookie, accept: 'application/vnd.vendor.diagnostics.api+json' },
    });
    t.equal(hits.status, 200, 'its hits are read');
    t.ok(
      Array.isArray(((await hits.json()) as { diagnostics?: { diagnostic?: unknown } }).diagnostics?.diagnostic),
      'as a diagnostics list',
    );

    // Over 64 KiB a declaration is checked on the device's checking thread (declaration-checker.ts INLINE_BYTES).
    const pools = Object.fromEntries(
      Array.from({ length: 1200 }, (_, i) => [
        `pool_${i}`,
        { class: 'Pool', members: [{ servicePort: 9000 + i, serverAddresses: ['192.0.2.10'] }] },
      ]),
    );
    const declaration = {
      class: 'AS3',
      action: 'dry-run',
      declaration: {
        class: 'ADC',
        schemaVersion: '3.0.0',
        id: 'package',
        Package: { class: 'Tenant', A1: { class: 'Application', template: 'generic', ...pools } },
      },
    };
    const body = JSON.stringify(declaration);
    t.ok(body.length > 64 * 1024, `the declaration is large enough for the thread (${body.length} bytes)`);
    const declared = await fetch(`${urls.device}/mgmt/shared/appsvcs/declare`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body,
    });
    const answer = await declared.text();
    t.equal(declared.status, 200, 'the dry run is checked and answered', { answer: answer.slice(0, 500), stderr });

    child.kill('SIGTERM');
    await once(child, 'exit');
  });
}

// ---------------------------------------------------------------------------------------------------------
// The checkout: `npm ci` links the command of the private workspace packages/checkout-cli into node_modules/.bin.

/** PATH without the project's node_modules/.bin folders and this Node's folder: the machine's own tools. */
const machinePath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => dir !== '' && !dir.endsWith(join('node_modules', '.bin')) && dir !== dirname(process.execPath))
  .join(delimiter);

t.test('after npm ci, `npx portolan` in the checkout runs the checkout’s own command, also from the machine’s npx', async (t) => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Record<string, unknown>> };
  t.same(
    lock.packages['node_modules/@portolan/checkout-cli'],
    { resolved: 'packages/checkout-cli', link: true },
    'package-lock.json has the workspace that carries the command (npm ci links it)',
  );
  t.same(lock.packages['packages/checkout-cli']?.bin, { portolan: 'portolan.js' }, 'with its bin `portolan`');
  const link = join(ROOT, 'node_modules', '.bin', 'portolan');
  t.ok(existsSync(link), 'node_modules/.bin/portolan exists (if not: run npm ci)');
  if (!existsSync(link)) return;
  t.equal(
    realpathSync(link),
    join(PACKAGES_DIR, 'checkout-cli', 'portolan.js'),
    'and is the checkout’s command, not a package from the registry',
  );
  // The machine's npx (on its own Node), as a user types it; --no-install: never fetch a `portolan` from the registry.
  const help = spawnSync('npx', ['--no-install', 'portolan', '--help'], {
    cwd: ROOT,
    env: { ...process.env, PATH: machinePath },
    encoding: 'utf8',
  });
  t.equal(help.status, 0, '`npx --no-install portolan --help` exits 0', { stderr: help.stderr, error: help.error?.message });
  t.match(help.stdout, /^Usage: portolan\b/m, 'and prints the usage');
});

// ---------------------------------------------------------------------------------------------------------
// The small packages.

const plans = packagePlans();
type SmallManifest = {
  name: string;
  version: string;
  private?: boolean;
  type?: string;
  license?: string;
  engines?: { node?: string };
  exports: Record<string, string | { types: string; default: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
const smallManifest = (folder: string) => JSON.parse(readFileSync(join(PACKAGES_DIR, folder, 'package.json'), 'utf8')) as SmallManifest;

/** What no small package may install: the server's dependencies (and Prism's telemetry postinstall). */
const SERVER_ONLY = [
  'pg',
  'ioredis',
  'pdfkit',
  '@stoplight/prism-http',
  '@stoplight/prism-http-server',
  '@stoplight/prism-cli',
  '@scarf/scarf',
  'pino',
  'pino-pretty',
  'prom-client',
  'openapi-backend',
  'busboy',
  'tar',
  'swagger-ui-dist',
  'hyperid',
  '@apidevtools/swagger-parser',
  'fastify',
];
/** Installed size limits (bytes of node_modules): SDK alone; mocks beside msw (its peer, the user's own); conformance with its dependencies. */
const SIZE_LIMIT = { sdk: 1_000_000, mocks: 3_000_000, conformance: 10_000_000 };

/** The exports of the full package's entries that a small package leaves out because they need the server, Prism or the command line. */
const SERVER_ONLY_EXPORTS = {
  conformance: ['startReferenceTarget', 'startPrismTarget', 'PRISM_KNOWN_FAILURES', 'main', 'USAGE', 'EXIT_STATUS', 'UNREACHABLE'],
  mocks: ['createStatefulHandlers'], // and everything of mocks/prism.ts (the Prism mocks)
};

/** What each SDK package's check calls against its local server: the call, the request it must send, one header of it. */
const SDK_CALLS: Record<string, { call: string; request: string; header?: [string, string]; body?: string }> = {
  mapping: { call: 'listVessels({ client })', request: 'GET /api/vessels' },
  topology: {
    call: "getTopology({ client, path: { topologyName: 'edge 1' } })",
    request: 'GET /mgmt/cm/ssl-orch/api/topology/edge%201',
    header: ['x-vendor-auth-token', 'token-1'],
  },
  snapshots: {
    call: "getSnapshot({ client, path: { snapshotId: '0' } })",
    request: 'GET /snapshot-analyzer/api/snapshots/0',
    header: ['cookie', 'ssosession=token-1'],
  },
  'client-registration': {
    call: "registerClient({ client, body: { username: 'alice@example.com', password: 'pw' } })",
    request: 'POST /vendor-oauth2/v1/client-register',
    body: 'username=alice%40example.com&password=pw',
  },
  'rate-limit': { call: 'getRateLimitStatus({ client })', request: 'GET /rate_limit_status', header: ['authorization', 'Bearer token-1'] },
  'device-config': {
    call: "getDeviceInfo({ client, auth: (scheme) => (scheme.type === 'apiKey' ? 'token-1' : undefined) })",
    request: 'GET /mgmt/shared/identified-devices/config/device-info',
    header: ['x-vendor-auth-token', 'token-1'],
  },
  health: { call: 'getHealth({ client })', request: 'GET /health' },
  'access-session': {
    call: "getAccessSession({ client, path: { sessionId: 's1' } })",
    request: 'GET /access/sessions/s1',
    header: ['authorization', `Basic ${btoa('token-1')}`],
  },
};

/** Runs a command to its end without blocking the others; as `run`. */
function runAsync(command: string, args: string[], cwd: string): Promise<{ ok: true; stdout: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve({ ok: true, stdout });
      const tail = `${stdout}${stderr}${error.message}`.trim().split('\n').slice(-15).join('\n');
      resolve({ ok: false, error: `\`${command} ${args.join(' ')}\` in ${cwd} failed:\n${tail}` });
    });
  });
}

/** Bytes of every file under a folder (symbolic links counted as links). */
function folderBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) bytes += lstatSync(join(entry.parentPath, entry.name)).size;
  return bytes;
}
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

/** `a.b.c` at least `min` (`>=x.y` of an engines field), numerically. */
function atLeast(version: string, min: string): boolean {
  const a = version.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < b.length; i++) if ((a[i] ?? 0) !== b[i]) return (a[i] ?? 0) > b[i]!;
  return true;
}

/** The machine's own Node (first `node` on PATH outside the project), with its version. */
const machineNode = (() => {
  for (const dir of machinePath.split(delimiter)) {
    const path = join(dir, 'node');
    if (!existsSync(path)) continue;
    const version = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (version.status === 0) return { path, version: version.stdout.trim() };
  }
  return undefined;
})();

/** The Node to run a package's check on: the machine's own when the package's engines allow it (the older one a user may have), else this Node. */
function nodeFor(manifest: SmallManifest): { path: string; version: string } {
  const min = /^>=\s*([\d.]+)$/.exec(manifest.engines?.node ?? '')?.[1] ?? '0';
  return machineNode && atLeast(machineNode.version, min) ? machineNode : { path: process.execPath, version: process.versions.node };
}

/** Installed package names of a project, from its lock file (nested ones too), and those with an install script. */
function installedPackages(app: string): { names: string[]; withScripts: string[] } {
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean; link?: boolean }>;
  };
  const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
  const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  return {
    names: [...new Set(entries.map(([path]) => nameOf(path)))].sort(),
    withScripts: entries.filter(([, info]) => info.hasInstallScript).map(([path]) => nameOf(path)),
  };
}

/** Runs a .mjs in a project with a given Node and parses the JSON it prints; the error (a failed check) when it fails. */
function runMjs(t: Test, app: string, node: string, name: string, text: string): Record<string, unknown> | undefined {
  writeFileSync(join(app, name), text);
  const result = run(node, [name], app);
  if (!result.ok) return void t.fail(result.error);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

t.test('the workspaces: one package per interface and the mocks and conformance packages, each with its README', async (t) => {
  const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; workspaces: string[] };
  t.same(rootManifest.workspaces, ['packages/*'], 'package.json: workspaces packages/*');
  t.same(
    INTERFACES.map((i) => `@portolan/sdk-${i.name}`).filter((name) => !plans.some((p) => p.name === name)),
    [],
    'every interface of src/lib/spec-catalog.ts has an SDK package in scripts/build.ts packagePlans()',
  );
  const folders = readdirSync(PACKAGES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  t.same(
    folders,
    [...plans.map((p) => p.folder), 'checkout-cli'].sort(),
    'packages/ holds those and the private checkout-cli, nothing else',
  );
  for (const plan of plans) {
    const manifest = smallManifest(plan.folder);
    t.equal(manifest.name, plan.name, `packages/${plan.folder} is ${plan.name}`);
    t.equal(manifest.version, rootManifest.version, `${plan.name} has the version of portolan`);
    t.notOk(manifest.private, `${plan.name} is publishable`);
    t.equal(manifest.type, 'module', `${plan.name} is ESM`);
    t.equal(manifest.license, 'MIT', `${plan.name} is MIT`);
    t.match(manifest.engines?.node ?? '', /^>=\d+(\.\d+)*$/, `${plan.name} names the Node it needs`);
    t.ok(existsSync(join(PACKAGES_DIR, plan.folder, 'README.md')), `${plan.name} has a README`);
    if (plan.folder.startsWith('sdk-')) t.same(manifest.dependencies ?? {}, {}, `${plan.name} has no dependencies`);
  }
});

t.test('the small packages, each packed and installed alone as a user does', async (t) => {
  // Pack the small packages from the build the full package's pack just ran (--ignore-scripts: their prepack would
  // rebuild each), then install each alone, as a user does.
  const packs = join(work, 'packs');
  mkdirSync(packs);
  const smallPacked = !packed.ok
    ? packed
    : run(
        'npm',
        ['pack', '--ignore-scripts', '--json', '--pack-destination', packs, ...plans.flatMap((p) => ['--workspace', p.name])],
        ROOT,
      );
  const tarballs = new Map<string, string>();
  if (smallPacked.ok)
    for (const entry of JSON.parse(smallPacked.stdout) as { name: string; filename: string }[])
      tarballs.set(entry.name, join(packs, entry.filename));

  type Installed = { app: string; bytes: number; baseline?: number; names: string[]; withScripts: string[]; files: string[] };
  const installs = new Map<string, Installed | string>();

  /** Installs a tarball into a new empty project (beside `first`, installed before it and measured apart). */
  async function installAlone(plan: (typeof plans)[number], first?: string): Promise<Installed | string> {
    const app = join(work, 'small', plan.folder);
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: `check-${plan.folder}`, private: true, type: 'module' })}\n`);
    const npmInstall = ['install', '--no-audit', '--no-fund', '--prefer-offline'];
    let baseline: number | undefined;
    if (first) {
      const before = await runAsync('npm', [...npmInstall, first], app);
      if (!before.ok) return before.error;
      baseline = folderBytes(join(app, 'node_modules'));
    }
    const installed = await runAsync('npm', [...npmInstall, tarballs.get(plan.name)!], app);
    if (!installed.ok) return installed.error;
    const entries: string[] = [];
    await list({ file: tarballs.get(plan.name)!, onReadEntry: (entry) => void entries.push(entry.path.replace(/^package\//, '')) });
    return { app, bytes: folderBytes(join(app, 'node_modules')), baseline, ...installedPackages(app), files: entries };
  }

  if (smallPacked.ok) {
    const mocksPlan = plans.find((p) => p.name === '@portolan/mocks')!;
    const queue = [...plans];
    // Two at a time: npm waits mostly on the cache and the registry.
    await Promise.all(
      [0, 1].map(async () => {
        for (let plan = queue.shift(); plan; plan = queue.shift()) {
          const peer = plan === mocksPlan ? `msw@${smallManifest(plan.folder).peerDependencies!.msw}` : undefined;
          installs.set(plan.name, await installAlone(plan, peer));
        }
      }),
    );
  }

  t.test('each small package installs alone from its tarball: a few MB, no server dependency, no install script', async (t) => {
    if (!smallPacked.ok) return void t.fail(smallPacked.error);
    for (const plan of plans) {
      const installed = installs.get(plan.name);
      if (typeof installed !== 'object') {
        t.fail(`${plan.name}: ${installed ?? 'not packed'}`);
        continue;
      }
      const manifest = smallManifest(plan.folder);
      const kind = plan.folder.startsWith('sdk-') ? 'sdk' : (plan.folder as 'mocks' | 'conformance');
      const added = installed.bytes - (installed.baseline ?? 0);
      t.ok(
        added < SIZE_LIMIT[kind],
        `${plan.name}: ${megabytes(added)} installed${installed.baseline ? ` beside msw (${megabytes(installed.baseline)})` : ''}, under ${megabytes(SIZE_LIMIT[kind])}`,
      );
      const server = installed.names.filter((name) => SERVER_ONLY.includes(name));
      t.same(server, [], `${plan.name}: none of the server's dependencies is installed`, { installed: installed.names });
      const expected = new Set([plan.name, ...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
      t.same(
        [...expected].filter((name) => !installed.names.includes(name)),
        [],
        `${plan.name}: it and its declared dependencies are installed`,
      );
      t.same(installed.withScripts, [], `${plan.name}: no installed package has an install script`);
      t.same(
        installed.files.filter((f) => !f.startsWith('dist/') && !['package.json', 'README.md'].includes(f)),
        [],
        `${plan.name}: the tarball holds dist/, package.json and README.md only`,
      );
      t.same(
        installed.files.filter((f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || /\.test\.|(^|\/)fixtures\//.test(f)),
        [],
        `${plan.name}: no TypeScript source, test or fixture`,
      );
      if (kind === 'sdk') t.same(installed.names, [plan.name], `${plan.name}: installs nothing else`);
    }
  });

  t.test('each SDK package calls an operation against a local server, on the machine’s Node when it can', async (t) => {
    for (const { name } of INTERFACES) {
      const plan = plans.find((p) => p.name === `@portolan/sdk-${name}`)!;
      const installed = installs.get(plan.name);
      if (typeof installed !== 'object') {
        t.fail(`${plan.name}: ${installed ?? 'not installed'}`);
        continue;
      }
      const call = SDK_CALLS[name];
      if (!call) {
        t.fail(`${plan.name}: add the operation its check calls to SDK_CALLS in scripts/package.test.ts`);
        continue;
      }
      const node = nodeFor(smallManifest(plan.folder));
      const fn = call.call.slice(0, call.call.indexOf('('));
      const result = runMjs(
        t,
        installed.app,
        node.path,
        'call.mjs',
        `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ${fn} } from '${plan.name}';
import { createClient } from '${plan.name}/client';
let seen;
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    seen = { request: request.method + ' ' + request.url, headers: request.headers, body };
    response.setHeader('content-type', 'application/json');
    response.end('{"answered":true}');
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const client = createClient({ baseUrl: 'http://127.0.0.1:' + server.address().port, auth: 'token-1' });
const { data, response } = await ${call.call};
server.close();
const spec = readFileSync(fileURLToPath(import.meta.resolve('${plan.name}/openapi.yaml')), 'utf8');
console.log(JSON.stringify({ status: response.status, data, seen, spec: /^openapi: /m.test(spec) }));
  `,
      ) as
        | { status: number; data: unknown; seen: { request: string; headers: Record<string, string>; body: string }; spec: boolean }
        | undefined;
      if (!result) continue;
      t.equal(result.seen.request, call.request, `${plan.name} on Node ${node.version}: ${fn} sends ${call.request}`);
      if (call.header)
        t.equal(result.seen.headers[call.header[0]], call.header[1], `${plan.name}: with ${call.header[0]} from the client's auth`);
      if (call.body) t.equal(result.seen.body, call.body, `${plan.name}: with its form body`);
      t.equal(result.status, 200, `${plan.name}: gets the answer`);
      t.same(result.data, { answered: true }, `${plan.name}: parsed as data`);
      t.ok(result.spec, `${plan.name}/openapi.yaml resolves to its OpenAPI document`);
    }
  });

  t.test('@portolan/mocks answers through msw/node’s setupServer', async (t) => {
    const installed = installs.get('@portolan/mocks');
    if (typeof installed !== 'object') return void t.fail(`@portolan/mocks: ${installed ?? 'not installed'}`);
    const node = nodeFor(smallManifest('mocks'));
    const result = runMjs(
      t,
      installed.app,
      node.path,
      'mocks.mjs',
      `
import { setupServer } from 'msw/node';
import * as mocks from '@portolan/mocks';
const server = setupServer(...mocks.createStatelessHandlers('health', { baseUrl: 'http://health.test' }), mocks.createCatchAllHandler());
server.listen();
const healthy = await fetch('http://health.test/health');
const unhealthy = await fetch('http://health.test/health', { headers: { Prefer: 'code=503' } });
const other = await fetch('http://health.test/nowhere');
server.close();
console.log(JSON.stringify({
  exports: Object.keys(mocks).sort(),
  healthy: [healthy.status, (await healthy.json()).status],
  unhealthy: [unhealthy.status, (await unhealthy.json()).status],
  other: other.status,
}));
  `,
    ) as { exports: string[]; healthy: [number, string]; unhealthy: [number, string]; other: number } | undefined;
    if (!result) return;
    t.same(result.healthy, [200, 'healthy'], `on Node ${node.version}: GET /health answers the spec's 200 example`);
    t.same(result.unhealthy, [503, 'unhealthy'], 'Prefer: code=503 picks the 503 example');
    t.equal(result.other, 501, 'the catch-all answers what no operation serves');
    const full = Object.keys(await import('../mocks/index.ts'));
    const prism = Object.keys(await import('../mocks/prism.ts'));
    t.same(
      full.filter((name) => !result.exports.includes(name) && !SERVER_ONLY_EXPORTS.mocks.includes(name) && !prism.includes(name)),
      [],
      'it exports every export of portolan/mocks but the stateful handlers and the Prism mocks',
    );
  });

  t.test('@portolan/conformance checks a stub: a conforming answer passes, a wrong one fails', async (t) => {
    const installed = installs.get('@portolan/conformance');
    if (typeof installed !== 'object') return void t.fail(`@portolan/conformance: ${installed ?? 'not installed'}`);
    const node = nodeFor(smallManifest('conformance'));
    const result = runMjs(
      t,
      installed.app,
      node.path,
      'conformance.mjs',
      `
import { createServer } from 'node:http';
import * as conformance from '@portolan/conformance';
// GET /health answered as the spec declares, or as plain text; everything else 404.
const stub = (conforming) => createServer((request, response) => {
  if (request.method !== 'GET' || request.url !== '/health') return void response.writeHead(404).end();
  if (!conforming) return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ status: 'healthy', database: 'connected', services: 'available', timestamp: '2025-03-14T09:26:53.589Z' }));
});
const out = { exports: Object.keys(conformance).sort(), scenarios: conformance.loadScenarios().length };
for (const conforming of [true, false]) {
  const server = stub(conforming);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const result = await conformance.runConformance({
    targets: { '*': 'http://127.0.0.1:' + server.address().port },
    interfaces: ['health'],
    stateless: true,
    safe: true,
    scenarios: [],
    fuzzRuns: 0,
    seed: 1,
  });
  server.close();
  out[conforming ? 'conforming' : 'wrong'] = {
    getHealth: result.operations.find((o) => o.operationId === 'getHealth')?.outcome,
    junit: conformance.toJUnit(result).startsWith('<?xml'),
  };
}
console.log(JSON.stringify(out));
  `,
    ) as
      | { exports: string[]; scenarios: number; conforming: { getHealth: string; junit: boolean }; wrong: { getHealth: string } }
      | undefined;
    if (!result) return;
    t.equal(result.conforming.getHealth, 'pass', `on Node ${node.version}: getHealth against the conforming stub passes`);
    t.equal(result.wrong.getHealth, 'fail', 'getHealth against the plain-text stub fails');
    t.ok(result.conforming.junit, 'toJUnit writes the report');
    t.ok(result.scenarios > 0, `the scenarios are shipped (${result.scenarios})`);
    const full = Object.keys(await import('../conformance/index.ts'));
    t.same(
      full.filter((name) => !result.exports.includes(name) && !SERVER_ONLY_EXPORTS.conformance.includes(name)),
      [],
      'it exports every export of portolan/conformance but the started targets and the command line (packages/conformance/index.ts)',
    );
  });

  t.test('each small package ships its README: the install line, links inside the package, examples that compile', async (t) => {
    const check = join(work, 'readmes');
    mkdirSync(join(check, 'node_modules', '@portolan'), { recursive: true });
    writeFileSync(join(check, 'package.json'), '{"type":"module"}\n');
    const files: string[] = [];
    for (const plan of plans) {
      const installed = installs.get(plan.name);
      if (typeof installed !== 'object') {
        t.fail(`${plan.name}: ${installed ?? 'not installed'}`);
        continue;
      }
      const folder = join(installed.app, 'node_modules', plan.name);
      const readme = join(folder, 'README.md');
      t.ok(existsSync(readme), `${plan.name}: README.md is in the installed package`);
      if (!existsSync(readme)) continue;
      const text = readFileSync(readme, 'utf8');
      t.match(text, new RegExp(`^npm install .*${plan.name}\\b`, 'm'), `${plan.name}: its README says how to install it`);
      const relative = [...text.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/.test(href));
      t.same(
        relative.filter((href) => !existsSync(join(folder, posix.normalize(href)))),
        [],
        `${plan.name}: every relative link of its README names a file of the package`,
      );
      symlinkSync(folder, join(check, 'node_modules', plan.name));
      if (plan.name === '@portolan/mocks') symlinkSync(join(installed.app, 'node_modules', 'msw'), join(check, 'node_modules', 'msw'));
      for (const [i, [, code]] of [...text.matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
        const file = `${plan.folder}-${i}.ts`;
        writeFileSync(join(check, file), code!);
        files.push(file);
      }
    }
    t.ok(files.length >= plans.length, `every README has a TypeScript example (${files.length})`);
    writeFileSync(
      join(check, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2024',
          strict: true,
          noEmit: true,
          // The packages' declarations are checked as far as the examples use them (all of msw's take 30 s).
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files,
      }),
    );
    const checked = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', check], check);
    t.ok(checked.ok, 'the README examples type-check against the installed packages (strict)', checked.ok ? {} : { error: checked.error });
  });
});
