// The npm package as a user gets it: `npm pack` (its prepack runs the build, scripts/build.ts), the
// tarball installed into a scratch project, then, from there and on this Node 24: every `exports` entry
// imported through Node's own resolution and type-checked with tsc, every data file the compiled code
// reads at run time read through that code, `portolan --help`, and one real start of the reference
// system from the installed bin, which processes a snapshot and checks a large declaration on the
// worker threads whose entry files must resolve inside dist/. Slow (a build, a pack and an install from the npm cache): hence the
// longer timeout.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, globSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { list } from 'tar';
import { loadRuleSetFile } from '../src/interfaces/snapshots/engine/rule-set.ts';
import { loadSample } from '../src/interfaces/snapshots/sample.ts';
import { INTERFACES } from '../src/lib/spec-catalog.ts';
import { runtimeAssetFiles } from './build.ts';

t.setTimeout(300_000);

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
