#!/usr/bin/env node
// The `portolan` command's TypeScript entry: bin/portolan.js loads it in a checkout (its build,
// dist/src/cli/main.js, in the package), and `npm start` runs it as `portolan start`: every role of the
// reference system.
// Node's compile cache (V8 code and type-stripped TypeScript, on disk, keyed by content) is switched on
// before anything else loads: from the second start on it saves about 200 ms of a start. It must be on
// before the modules are compiled, hence the dynamic import.
import { enableCompileCache } from 'node:module';

enableCompileCache();
// `portolan --help | head`: a reader that stops early ends the output, not the command with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}
const { runPortolan } = await import('./commands.ts');
process.exitCode = await runPortolan(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
