import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// No test may depend on how fast the machine is: the suite must pass with two CPU burners beside it.
// A test that reads the wall clock almost always bounds a duration ("took < 500 ms"), which fails on a busy
// machine; time is moved with the injected fake clock (src/lib/clock.ts) and work is measured by counts.
// This check finds new ones. A read of the clock that bounds nothing (a polling deadline that only keeps a
// broken target from hanging the test, a lower bound that a timer can never undercut) says so on its line
// with `wall-clock: <why>`.

const ROOT = new URL('../', import.meta.url).pathname;
const FOLDERS = ['src', 'scripts', 'conformance', 'mocks', 'dashboards'];
const CLOCK_READ = /\bperformance\.now\(\)|\bprocess\.hrtime\b|\bDate\.now\(\)|\bmonitorEventLoopDelay\b/;
const JUSTIFIED = /wall-clock: \S/;
const SELF = new URL(import.meta.url).pathname; // its own examples below are not tests of timing

/** Lines of a test file that read the wall clock without saying why that bounds nothing. */
export function unjustifiedClockReads(text: string): number[] {
  const lines = text.split('\n');
  return lines.flatMap((line, i) => (CLOCK_READ.test(line) && !JUSTIFIED.test(line) && !JUSTIFIED.test(lines[i - 1] ?? '') ? [i + 1] : []));
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'bench' || e.name === 'fixtures' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') && path !== SELF ? [path] : [];
  });
}

t.test('no test reads the wall clock to bound a duration', async (t) => {
  const files = FOLDERS.flatMap((f) => testFiles(join(ROOT, f)));
  t.ok(files.length > 100, `${files.length} test files read`);
  const found = files.flatMap((file) => unjustifiedClockReads(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`));
  t.same(found, [], 'use the fake clock, counts or events; or say `wall-clock: <why>` where the read bounds nothing');
});

t.test('the check finds a timed assertion and accepts a justified read', async (t) => {
  t.same(unjustifiedClockReads('const s = performance.now();\nawait work();\nt.ok(performance.now() - s < 50);'), [1, 3]);
  t.same(unjustifiedClockReads('const deadline = Date.now() + 20_000; // wall-clock: only stops a hung child'), []);
  t.same(unjustifiedClockReads('// wall-clock: lower bound only\nt.ok(process.hrtime.bigint() > start);'), []);
});
