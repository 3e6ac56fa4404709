// Preloaded by the npm scripts that run src/cli/main.ts (`node --import ./src/cli/compile-cache.js src/cli/main.ts ...`):
// Node's compile cache switched on before the entry file loads, so main.ts itself comes stripped from the
// cache too and Node never loads its TypeScript stripper (amaro: ~40 ms and ~17 MB of every run). Plain
// JavaScript, as it must load without that stripper. main.ts switches the cache on as well (the installed
// package's bin, compiled to JavaScript, needs no preload); the second call does nothing.
import { enableCompileCache } from 'node:module';

enableCompileCache();
