// `npm test`: typecheck, format and lint (Biome, biome.jsonc), then every tap test; ends with the plain line `N passed, N failed, N skipped`
// (tap's assertion counts). With PORTOLAN_FAIL_ON_SKIP=1 (set by .ci/run) a skipped test is a failure:
// the PostgreSQL and Redis servers are always there in CI.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const failOnSkip = process.env.PORTOLAN_FAIL_ON_SKIP === '1';

console.log('> tsc (typecheck)');
const typecheck = spawnSync('tsc', ['-p', '.'], { stdio: 'inherit' });
const typecheckFailed = typecheck.status !== 0;

// Formatting and lint, checked without writing (`npx biome check --write` fixes a tree); a warning fails too.
console.log('> biome ci (format and lint)');
const lint = spawnSync('biome', ['ci', '--error-on-warnings', '.'], { stdio: 'inherit' });
const lintFailed = lint.status !== 0;

// System packages some tests need (pdftoppm); installed with apt-get when missing (scripts/system-packages.ts).
spawnSync(process.execPath, ['scripts/system-packages.ts'], { stdio: 'inherit' });

// tap compiles its Test class with the configured plugins on first use, but that first run still
// loads the defaults (the TypeScript plugin's ts-node); build it up front so Node 24 runs the .ts files.
spawnSync('tap', ['build'], { stdio: 'ignore' });
rmSync('.tap/test-results', { recursive: true, force: true });
const tap = spawn('tap', args, { stdio: ['inherit', 'pipe', 'inherit'] });
let summary: Record<string, number> | undefined;
let tail = '';
tap.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4096);
});
const tapStatus: number = await new Promise((resolve) => tap.on('close', (code) => resolve(code ?? 1)));
const match = /# (\{ total: [^}]*\})/.exec(tail);
if (match) summary = Object.fromEntries([...match[1]!.matchAll(/(\w+): (\d+)/g)].map((m) => [m[1], Number(m[2])]));

const skipped = listSkips('.tap/test-results');
if (skipped.length > 0) {
  console.log(`\nSkipped (${skipped.length}):`);
  for (const s of skipped) console.log(`  - ${s}`);
}
const passed = summary?.pass ?? 0;
const failed = (summary?.fail ?? (tapStatus === 0 ? 0 : 1)) + (typecheckFailed ? 1 : 0) + (lintFailed ? 1 : 0);
const skips = summary?.skip ?? 0;
if (typecheckFailed) console.log('\ntypecheck failed (counted as one failure)');
if (lintFailed) console.log('\nbiome ci failed: formatting or lint (counted as one failure; `npx biome check --write` fixes what it can)');
if (failOnSkip && skips > 0) console.log('\nPORTOLAN_FAIL_ON_SKIP=1: skipped tests count as a failure here.');
console.log(`\n${passed} passed, ${failed} failed, ${skips} skipped`);
process.exitCode = failed > 0 || tapStatus !== 0 || (failOnSkip && skips > 0) ? 1 : 0;

/** `file: test name # SKIP reason` for every skipped test in tap's saved results. */
function listSkips(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.tap')) {
        for (const line of readFileSync(path, 'utf8').split('\n')) {
          const m = /^\s*ok \d+ - (.*?) # SKIP(.*)$/.exec(line);
          if (m) found.push(`${path.slice(dir.length + 1, -4)}: ${m[1]} —${m[2]}`);
        }
      }
    }
  };
  walk(dir);
  return found;
}
