// Builds the npm packages (`npm run build`; `npm pack` runs it as `prepack`).
//
// The full package `portolan`, into dist/: tsc with tsconfig.build.json compiles what the package's entry
// points import to JavaScript and .d.ts, then the files that code reads at run time are copied beside it in
// the same layout, so every path computed from import.meta.url (`new URL('../../specs/', import.meta.url)`
// and the like) finds them from dist/ as it does from the sources. Which files: RUNTIME_ASSETS below;
// scripts/package.test.ts installs the packed result and reads each of them through the code that reads it.
//
// The small packages of packages/ (npm workspaces), into packages/<folder>/dist/: tsc with
// tsconfig.packages.json compiles their entry points into a scratch folder, then each package gets the
// files its entry points import (followed through static and dynamic imports and require calls, .d.ts
// included) and the data files its code reads (PackagePlan below). A package whose code imports a package
// its package.json does not declare, or whose exports name a file that is not there, stops the build with
// one line. `node scripts/build.ts --package <name>` builds only that one (each small package's prepack).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, globSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { INTERFACES } from '../src/lib/spec-catalog.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = join(ROOT, 'dist');
export const PACKAGES_DIR = join(ROOT, 'packages');

/**
 * Globs (from the project root) of the non-TypeScript files the compiled code reads at run time:
 * the interfaces' specs (spec-catalog.ts; not the other YAML of specs/, e.g. release data), the compiled contracts (server/compiled-contract.ts), the snapshot
 * engine's rule set and the sample snapshot, and every data file under src/ and conformance/
 * (conformance/data, conformance/scenarios). Test fixtures are never copied.
 */
export const RUNTIME_ASSETS = [
  `specs/{${INTERFACES.map((i) => i.name).join(',')}}.yaml`,
  'generated/*/contract.gen.json',
  'src/**/*.{yaml,yml,json}',
  'src/interfaces/snapshots/sample/**/*',
  'conformance/data/**/*',
  'conformance/scenarios/**/*',
];

const isTestFile = (path: string) => path.split(sep).includes('fixtures') || /\.test\.[cm]?[jt]s$/.test(path);

/** The files matching some of `patterns` (globs from `root`), relative to it, tests and fixtures left out, sorted. */
function matchingFiles(patterns: readonly string[], root: string): string[] {
  const files = new Set<string>();
  for (const pattern of patterns) {
    for (const path of globSync(pattern, { cwd: root, withFileTypes: true })) {
      if (!path.isFile()) continue;
      const relative = join(path.parentPath, path.name)
        .slice(root.length)
        .replace(/^[\\/]/, '');
      if (!isTestFile(relative)) files.add(relative);
    }
  }
  return [...files].sort();
}

/** The asset files to copy, relative to the project root, sorted. */
export function runtimeAssetFiles(root = ROOT): string[] {
  return matchingFiles(RUNTIME_ASSETS, root);
}

/** Runs tsc on a project file (its errors on this terminal); an error line when it fails. */
function compile(project: string, outDir?: string): string | undefined {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const args = [tsc, '-p', join(ROOT, project), ...(outDir ? ['--outDir', outDir] : [])];
  const compiled = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (compiled.status !== 0) return `build: tsc -p ${project} failed (errors above); fix them and run \`npm run build\` again.`;
  return undefined;
}

/**
 * Empties dist/, compiles, copies the assets; resolves to an error line or undefined when it worked.
 *
 * @example
 * const error = build() ?? buildPackages(); // `npm run build`
 */
export function build(): string | undefined {
  rmSync(DIST, { recursive: true, force: true });
  const failed = compile('tsconfig.build.json');
  if (failed) return failed;
  for (const file of runtimeAssetFiles()) {
    const target = join(DIST, file);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(ROOT, file), target);
  }
  const main = join(DIST, 'src', 'cli', 'main.js');
  if (!existsSync(main)) return `build: ${basename(main)} is missing from dist/src/cli: the package's bin would not exist.`;
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  for (const bin of Object.values(manifest.bin ?? {}))
    if (!existsSync(join(ROOT, bin))) return `build: ${bin}, the package's bin in package.json, does not exist.`;
  return undefined;
}

/**
 * One small package: its package.json's folder under packages/, its entry modules (paths from the project
 * root without extension, as tsconfig.packages.json compiles them), where each compiled module goes in its
 * dist/ (undefined: it must not be shipped, which stops the build), and the data files its code reads.
 */
export type PackagePlan = {
  name: string;
  folder: string;
  entries: string[];
  place: (module: string) => string | undefined;
  assets: { from: string; to: string }[];
};

const specAssets = () => INTERFACES.map((i) => ({ from: `specs/${i.name}.yaml`, to: `specs/${i.name}.yaml` }));

/** The repository's layout under dist/, the entry file packages/<folder>/index at dist/index, nothing else of packages/. */
const repositoryLayout = (folder: string) => (module: string) =>
  module === `packages/${folder}/index` ? 'index' : module.startsWith('packages/') ? undefined : module;

/**
 * Every small package: `@portolan/sdk-<interface>` per interface of src/lib/spec-catalog.ts (its generated
 * SDK with the client runtime it shares, its spec as dist/openapi.yaml), `@portolan/mocks` (the stateless MSW
 * handlers: they read the specs) and `@portolan/conformance` (the engine against URLs: it reads the specs,
 * conformance/data and conformance/scenarios).
 *
 * @example
 * packagePlans().map((plan) => plan.name); // ['@portolan/sdk-mapping', ..., '@portolan/mocks', '@portolan/conformance']
 */
export function packagePlans(): PackagePlan[] {
  const sdks = INTERFACES.map(({ name }): PackagePlan => {
    const own = `generated/${name}/`;
    const runtime = 'generated/sdk-runtime/';
    return {
      name: `@portolan/sdk-${name}`,
      folder: `sdk-${name}`,
      entries: [`${own}index`, `${own}client/index`],
      place: (module) =>
        module.startsWith(own) ? module.slice(own.length) : module.startsWith(runtime) ? module.slice('generated/'.length) : undefined,
      assets: [{ from: `specs/${name}.yaml`, to: 'openapi.yaml' }],
    };
  });
  const conformanceData = matchingFiles(['conformance/data/**/*', 'conformance/scenarios/**/*'], ROOT).map((file) => ({
    from: file,
    to: file.split(sep).join('/'),
  }));
  return [
    ...sdks,
    { name: '@portolan/mocks', folder: 'mocks', entries: ['packages/mocks/index'], place: repositoryLayout('mocks'), assets: specAssets() },
    {
      name: '@portolan/conformance',
      folder: 'conformance',
      entries: ['packages/conformance/index'],
      place: repositoryLayout('conformance'),
      assets: [...specAssets(), ...conformanceData],
    },
  ];
}

type Manifest = {
  name: string;
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageNameOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const DECLARATION = /\.d\.ts$/;
const moduleOf = (file: string) => file.replace(DECLARATION, '').replace(/\.(js|json)$/, '');
const extensionOf = (file: string) => (DECLARATION.test(file) ? '.d.ts' : posix.extname(file));

/**
 * What a package ships of the compiled tree in `staging`: every file reachable from its entries' .js
 * (through static and dynamic imports and `require` calls) and from their .d.ts (through type imports:
 * a module whose types the entries never name ships without its .d.ts), and the packages they import
 * (the JavaScript's, and those only the declarations name). Paths are posix paths from the project root.
 */
function packageClosure(
  staging: string,
  entries: readonly string[],
): { files: string[]; imports: Map<string, string>; typeImports: Map<string, string>; missing: string[] } {
  const files = new Set<string>();
  const imports = new Map<string, string>();
  const typeImports = new Map<string, string>();
  const missing: string[] = [];
  const pending = entries.flatMap((entry) => [`${entry}.js`, `${entry}.d.ts`]);
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    if (!existsSync(join(staging, file))) {
      missing.push(file);
      continue;
    }
    files.add(file);
    if (file.endsWith('.json')) continue;
    const declaration = DECLARATION.test(file);
    const text = readFileSync(join(staging, file), 'utf8');
    const found = ts.preProcessFile(text, true, true);
    const specifiers = [
      ...found.importedFiles.map((f) => f.fileName),
      ...[...text.matchAll(/require\.resolve\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!),
    ];
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) pending.push(resolveRelative(file, specifier));
      else if (!isBuiltin(specifier)) (declaration ? typeImports : imports).set(packageNameOf(specifier), file);
    }
    for (const reference of found.typeReferenceDirectives) typeImports.set(`@types/${reference.fileName}`, file);
  }
  return { files: [...files].sort(), imports, typeImports, missing };
}

/** The file a relative specifier of `file` names: the same kind of file (a .d.ts for a declaration's import). */
function resolveRelative(file: string, specifier: string): string {
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  if (target.endsWith('.json')) return target;
  return DECLARATION.test(file) ? `${target.replace(/\.[cm]?[jt]s$/, '')}.d.ts` : target;
}

/**
 * A compiled file's text with every relative specifier pointing where its target is placed in the package
 * (`placed` maps a module path to its place); in declarations `./x.ts` becomes `./x.js`, which every
 * TypeScript version resolves to x.d.ts.
 */
function relocateImports(file: string, text: string, placed: (module: string) => string): string {
  const declaration = DECLARATION.test(file);
  const from = posix.dirname(placed(moduleOf(file)));
  const references = ts.preProcessFile(text, true, true).importedFiles.filter((f) => f.fileName.startsWith('.'));
  let out = '';
  let at = 0;
  for (const reference of references.sort((a, b) => a.pos - b.pos)) {
    // `pos` is the string literal's start, its opening quote included or not depending on the TypeScript version.
    const start = text.indexOf(reference.fileName, reference.pos);
    if (start < 0 || start > reference.pos + 1) throw new Error(`build: cannot find the import '${reference.fileName}' in ${file}.`);
    const target = resolveRelative(file, reference.fileName);
    const extension = target.endsWith('.json') ? '.json' : declaration ? '.js' : posix.extname(reference.fileName);
    let specifier = posix.relative(from, placed(moduleOf(target))) + extension;
    if (!specifier.startsWith('.')) specifier = `./${specifier}`;
    out += text.slice(at, start) + specifier;
    at = start + reference.fileName.length;
  }
  return out + text.slice(at);
}

/** The files named by a package.json's exports (each condition's target), relative to its folder. */
const exportTargets = (manifest: Manifest) =>
  Object.values(manifest.exports ?? {}).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));

/** Writes one package's dist/ from the compiled tree in `staging`; an error line when it cannot. */
function assemblePackage(plan: PackagePlan, staging: string): string | undefined {
  const folder = join(PACKAGES_DIR, plan.folder);
  const where = `packages/${plan.folder}`;
  if (!existsSync(join(folder, 'package.json')))
    return `build: ${where}/package.json is missing: every package of scripts/build.ts packagePlans() has a folder with its package.json and README.md (copy one of packages/sdk-*).`;
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
  if (manifest.name !== plan.name) return `build: ${where}/package.json is named ${manifest.name}, not ${plan.name}.`;
  if (!existsSync(join(folder, 'README.md'))) return `build: ${where}/README.md is missing: npm shows it as the package's page.`;

  const { files, imports, typeImports, missing } = packageClosure(staging, plan.entries);
  if (missing.length > 0) return `build: ${plan.name} imports ${missing[0]}, which tsc -p tsconfig.packages.json did not write.`;
  const outside = files.find((file) => plan.place(moduleOf(file)) === undefined);
  if (outside) return `build: ${plan.name} would ship ${outside}, which does not belong in it (scripts/build.ts packagePlans()).`;
  const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
  for (const [name, file] of [...imports, ...typeImports].filter(([name]) => name !== '@types/node'))
    if (!declared.has(name))
      return `build: ${plan.name} imports ${name} (in ${file}) but ${where}/package.json does not depend on it: add it, or keep that import out of the package.`;

  const dist = join(folder, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const placed = (module: string) => plan.place(module)!;
  for (const file of files) {
    const target = join(dist, placed(moduleOf(file)) + extensionOf(file));
    mkdirSync(dirname(target), { recursive: true });
    const text = readFileSync(join(staging, file), 'utf8');
    writeFileSync(target, file.endsWith('.json') ? text : relocateImports(file, text, placed));
  }
  for (const asset of plan.assets) {
    const target = join(dist, asset.to);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(ROOT, asset.from), target);
  }
  const absent = exportTargets(manifest).find((target) => !existsSync(join(folder, target)));
  if (absent) return `build: ${where}/package.json exports ${absent}, which the build did not write.`;
  return undefined;
}

/**
 * Compiles the small packages' entries and writes the dist/ of each (or of the one named); an error line when it fails.
 *
 * @example
 * const error = buildPackages('@portolan/sdk-health'); // packages/sdk-health/dist/ written, or why not
 */
export function buildPackages(only?: string): string | undefined {
  const plans = packagePlans().filter((plan) => only === undefined || plan.name === only);
  if (plans.length === 0)
    return `build: no package ${only}; the packages are ${packagePlans()
      .map((p) => p.name)
      .join(', ')}.`;
  const staging = mkdtempSync(join(tmpdir(), 'portolan-packages-'));
  try {
    const failed = compile('tsconfig.packages.json', staging);
    if (failed) return failed;
    for (const plan of plans) {
      const error = assemblePackage(plan, staging);
      if (error) return error;
    }
    return undefined;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const only = args[0] === '--package' ? args[1] : undefined;
  if (args.length > 0 && (args[0] !== '--package' || !only || args.length > 2)) {
    console.error('build: usage: node scripts/build.ts [--package <name>]');
    process.exitCode = 2;
  } else {
    const error = only ? buildPackages(only) : (build() ?? buildPackages());
    if (error) {
      console.error(error);
      process.exitCode = 1;
    } else if (only) {
      console.log(`build: packages/${packagePlans().find((p) => p.name === only)!.folder}/dist/ written.`);
    } else {
      console.log(
        `build: dist/ written (${runtimeAssetFiles().length} data files copied beside the compiled code), and the dist/ of ${packagePlans().length} packages in packages/.`,
      );
    }
  }
}
