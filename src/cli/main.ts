#!/usr/bin/env node
// The `portolan` command. `npm start` runs `portolan start`: every role of the reference system.
// Node's compile cache (V8 code and type-stripped TypeScript, on disk, keyed by content) is switched on
// before anything else loads: from the second start on it saves about 200 ms of a start. It must be on
// before the modules are compiled, hence the dynamic import.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./commands.ts');
