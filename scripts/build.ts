// Builds the npm package into dist/ (`npm run build`; `npm pack` runs it as `prepack`): tsc with
// tsconfig.build.json compiles what the package's entry points import to JavaScript and .d.ts, then the
// files that code reads at run time are copied beside it in the same layout, so every path computed
// from import.meta.url (`new URL('../../specs/', import.meta.url)` and the like) finds them from dist/
// as it does from the sources. Which files: RUNTIME_ASSETS below; scripts/package.test.ts installs the
// packed result and reads each of them through the code that reads it.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, globSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTERFACES } from '../src/lib/spec-catalog.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = join(ROOT, 'dist');

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

/** The asset files to copy, relative to the project root, sorted. */
export function runtimeAssetFiles(root = ROOT): string[] {
  const files = new Set<string>();
  for (const pattern of RUNTIME_ASSETS) {
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

/** Empties dist/, compiles, copies the assets; resolves to an error line or undefined when it worked. */
export function build(): string | undefined {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (compiled.status !== 0) return 'build: tsc -p tsconfig.build.json failed (errors above); fix them and run `npm run build` again.';
  for (const file of runtimeAssetFiles()) {
    const target = join(DIST, file);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(ROOT, file), target);
  }
  const main = join(DIST, 'src', 'cli', 'main.js');
  if (!existsSync(main)) return `build: ${basename(main)} is missing from dist/src/cli: the package's bin would not exist.`;
  return undefined;
}

if (import.meta.main) {
  const error = build();
  if (error) {
    console.error(error);
    process.exitCode = 1;
  } else {
    console.log(`build: dist/ written (${runtimeAssetFiles().length} data files copied beside the compiled code).`);
  }
}
