// `npm run bench`: the data-path benchmarks of issue 22 in turn - bench:gateway, bench:mapping, bench:startup,
// bench:snapshots - each as a child process (each writes its own block of docs/benchmarks.md), stopping at the first that
// fails. `--no-readme` is passed on to each; `--only gateway,mapping` runs some of them.
//
//   npm run bench [-- --no-readme --only gateway,mapping,startup,snapshots]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCHES = ['gateway', 'mapping', 'startup', 'snapshots'] as const;

const { values } = parseArgs({
  allowNegative: true,
  options: { readme: { type: 'boolean', default: true }, only: { type: 'string', default: BENCHES.join(',') } },
});
const chosen = values.only.split(',').map((name) => name.trim());
const unknown = chosen.filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length) {
  console.error(`--only: choose from ${BENCHES.join(', ')} (got ${unknown.join(', ')})`);
  process.exit(2);
}

const root = fileURLToPath(new URL('../../', import.meta.url));
let exitCode = 0;
for (const name of BENCHES.filter((bench) => chosen.includes(bench))) {
  console.log(`\n=== bench:${name} ===\n`);
  const started = performance.now();
  const result = spawnSync(process.execPath, [`scripts/bench/${name}.ts`, ...(values.readme ? [] : ['--no-readme'])], {
    cwd: root,
    stdio: 'inherit',
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  if (result.status !== 0) {
    console.error(
      `\nbench:${name} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`}) after ${seconds} s; the rest is not run.`,
    );
    exitCode = 1;
    break;
  }
  console.log(`\nbench:${name} done in ${seconds} s.`);
}
process.exitCode = exitCode;
