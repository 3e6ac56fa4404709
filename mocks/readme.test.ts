import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PRISM_DYNAMIC_DEVIATIONS, PRISM_DYNAMIC_SEED, PRISM_STATIC_DEVIATIONS } from './prism-deviations.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const snippets = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** Runs a snippet as an ES module written at the repository root (its relative imports resolve there). */
function run(code: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module-typescript', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
  });
}

t.test('every TypeScript snippet of mocks/README.md runs and its assertions hold', async (t) => {
  t.equal(snippets.length, 3, 'stateless, catch-all and stateful');
  for (const [i, snippet] of snippets.entries()) {
    const { code, output } = await run(snippet);
    t.equal(
      code,
      0,
      `snippet ${i + 1} (${snippet
        .split('\n')
        .find((l) => l.includes('./mocks/index.ts'))
        ?.trim()})${code === 0 ? '' : `:\n${output}`}`,
    );
  }
});

t.test('the README lists every recorded Prism deviation', async (t) => {
  t.same(Object.keys(PRISM_STATIC_DEVIATIONS), [], 'none with the named examples, as the README says');
  t.match(README, `--seed ${PRISM_DYNAMIC_SEED}`);
  for (const key of Object.keys(PRISM_DYNAMIC_DEVIATIONS)) {
    const [role, operationId] = key.split(' ');
    const named =
      operationId === 'getHealth'
        ? README.includes(`\`${role}\``) && README.includes('`getHealth` on all six roles')
        : README.includes(`\`${role} ${operationId}\``);
    t.ok(named, key);
  }
});
