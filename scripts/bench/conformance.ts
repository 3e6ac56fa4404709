// `node scripts/bench/conformance.ts [--fuzz-runs n] [--seed n]`: times the whole conformance suite
// against the reference system as `npm run conformance -- --target reference` runs it (start the
// system in-process, every operation, every scenario, fuzzing with the default runs) and prints the
// figure against the 60 s budget. Not a unit test: it measures this machine.
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startReferenceTarget } from '../../conformance/reference-target.ts';
import { DEFAULT_FUZZ_RUNS, runConformance } from '../../conformance/run.ts';

const BUDGET_SECONDS = 60;
const { values } = parseArgs({ options: { 'fuzz-runs': { type: 'string' }, seed: { type: 'string' } } });
const fuzzRuns = values['fuzz-runs'] !== undefined ? Number(values['fuzz-runs']) : DEFAULT_FUZZ_RUNS;
const seed = values.seed !== undefined ? Number(values.seed) : 1;

const phases = new Map<string, number>();
let mark = performance.now();
const lap = (name: string) => {
  const now = performance.now();
  phases.set(name, (phases.get(name) ?? 0) + now - mark);
  mark = now;
};

const started = performance.now();
const cpuBefore = process.cpuUsage();
const reference = await startReferenceTarget();
lap('start the reference system');
let requests = 0;
const result = await runConformance({
  targets: reference.targets,
  credentials: reference.credentials,
  variables: reference.variables,
  seed,
  fuzzRuns,
  env: {},
  onProgress: (line) => lap(/ fuzz /.test(line) ? 'fuzzing' : / scenario /.test(line) ? 'scenarios' : 'operations'),
});
await reference.stop();
lap('stop');
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);

requests += result.operations.reduce((n, o) => n + o.probes.length, 0);
requests += result.scenarios.reduce((n, s) => n + s.steps.reduce((m, st) => m + st.requests, 0), 0);
console.log(`conformance suite against the reference system (seed ${seed}, ${fuzzRuns} fuzz runs per operation)`);
for (const [name, ms] of phases) console.log(`  ${name.padEnd(28)} ${(ms / 1000).toFixed(2)} s`);
console.log(
  `  checks: ${result.operations.length} operation checks, ${result.scenarios.length} scenarios, ${result.fuzz.length} fuzzed operations; ${requests} requests besides fuzzing`,
);
console.log(`  verdict: ${result.totals.violations} violations, ${result.totals.operations.notImplemented} operations not implemented`);
console.log(
  `  machine: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; CPU used ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
);
console.log(`total: ${seconds.toFixed(1)} s (budget ${BUDGET_SECONDS} s: ${seconds < BUDGET_SECONDS ? 'within' : 'OVER'})`);
process.exitCode = seconds < BUDGET_SECONDS ? 0 : 1;
