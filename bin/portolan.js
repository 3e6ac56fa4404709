#!/usr/bin/env node
// The `portolan` command, in a checkout and in the installed package. Plain JavaScript that every Node.js
// since 12 parses (no syntax newer than Node 12: no top-level await, no `?.`, no `??`), so an older Node
// gets one line naming the version needed instead of a SyntaxError from the code below. Then it loads the
// command: src/cli/main.ts in a checkout (Node runs TypeScript), dist/src/cli/main.js in the package.
// biome-ignore-all lint/style/useNodejsImportProtocol: `node:` imports fail on some of the old Node versions this file must greet.
import { existsSync, readFileSync, realpathSync } from 'fs';
import { dirname, join } from 'path';
import { fileURLToPath, pathToFileURL } from 'url';

/** The Node.js version needed when package.json cannot say (src/cli/bin.test.ts keeps it equal to "engines"). */
const NEEDED_NODE = '24';

const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))));

/** The version "engines.node" of package.json asks for (`>=24`, `>=24.1.0`), else NEEDED_NODE. */
function neededVersion() {
  try {
    const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines;
    const match = /^\s*>=\s*(\d+(?:\.\d+){0,2})\s*$/.exec((engines && engines.node) || '');
    if (match) return match[1];
  } catch (_error) {
    // No readable package.json: the constant.
  }
  return NEEDED_NODE;
}

/** Whether the dotted version `actual` is `needed` or newer. */
function atLeast(actual, needed) {
  const a = actual.split('.').map(Number);
  const b = needed.split('.').map(Number);
  for (let i = 0; i < b.length; i++) {
    if ((a[i] || 0) !== b[i]) return (a[i] || 0) > b[i];
  }
  return true;
}

/** Loads the command (it runs on load); a missing file or dependency is one line. */
function run(entry) {
  return import('module')
    .then((module) => {
      // The compile cache on before the command's modules load (src/cli/compile-cache.js says why).
      if (module.enableCompileCache) module.enableCompileCache();
      return import(pathToFileURL(entry).href);
    })
    .catch((error) => {
      if (!error || error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
      const what = existsSync(entry) ? String(error.message).split('\n')[0] : `${entry} is missing`;
      process.stderr.write(`portolan cannot load: ${what}. In a checkout of Portolan run npm ci; else reinstall portolan.\n`);
      process.exitCode = 1;
    });
}

const needed = neededVersion();
if (!atLeast(process.versions.node, needed)) {
  process.stderr.write(`portolan needs Node.js ${needed} or newer; this is Node.js ${process.versions.node} (https://nodejs.org).\n`);
  process.exitCode = 1;
} else {
  // A checkout runs its TypeScript; Node strips no types under node_modules, where the package runs its build.
  const source = join(root, 'src', 'cli', 'main.ts');
  run(existsSync(source) && !/[\\/]node_modules[\\/]/.test(root) ? source : join(root, 'dist', 'src', 'cli', 'main.js'));
}
