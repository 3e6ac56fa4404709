// `portolan generate` on a folder of specs of its own (a copy of one spec), into a temporary generated/: once,
// and with --watch on the real folder watcher and timers: a save regenerates, an invalid save is one error line,
// Ctrl-C stops it.
import t from 'tap';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TapTest } from '../lib/tap-test.ts';
import { specHash } from '../server/compiled-contract.ts';
import { runGenerateCommand } from './generate-command.ts';

t.setTimeout(240_000);

const healthSpec = fileURLToPath(new URL('../../specs/health.yaml', import.meta.url));

function folders(t: TapTest) {
  const dir = t.testdir({ specs: {}, generated: {} });
  const specsDir = join(dir, 'specs');
  cpSync(healthSpec, join(specsDir, 'health.yaml'));
  return { specsDir, generatedDir: join(dir, 'generated') };
}

function capture() {
  const seen = { out: '', err: '' };
  return { seen, io: { stdout: (text: string) => void (seen.out += text), stderr: (text: string) => void (seen.err += text) } };
}

/** Waits for `condition`, checking every 50 ms (the generation and the folder's events take their time). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

t.test('generate <interface> writes that interface under the generated folder', async (t) => {
  const { specsDir, generatedDir } = folders(t);
  const { seen, io } = capture();
  t.equal(await runGenerateCommand(['health'], io, { specsDir, generatedDir }), 0, seen.err);
  t.equal(seen.out, 'generated/health\n');
  const contract = JSON.parse(readFileSync(join(generatedDir, 'health', 'contract.gen.json'), 'utf8')) as { sourceSha256: string };
  t.equal(contract.sourceSha256, specHash(readFileSync(healthSpec, 'utf8')));
});

t.test('generate --watch: stale at start, then each save regenerated; an invalid save is one line; Ctrl-C stops', async (t) => {
  const { specsDir, generatedDir } = folders(t);
  const { seen, io } = capture();
  let interrupt: () => void = () => undefined;
  const running = runGenerateCommand(['--watch'], io, { specsDir, generatedDir, onInterrupt: (stop) => (interrupt = stop) });
  const regenerated = () => seen.out.split('\n').filter((line) => line.startsWith('specs/health.yaml: regenerated')).length;
  await until(() => regenerated() === 1);
  t.match(seen.out, /^Watching every spec: each save regenerates its interface in generated\/\. Press Ctrl-C to stop\.\n/);
  t.match(seen.out, /\nspecs\/health\.yaml: regenerated generated\/health\/ \(\d+\.\d s\)\n$/, 'never generated: regenerated at start');

  const edited = `${readFileSync(healthSpec, 'utf8')}# edited\n`;
  writeFileSync(join(specsDir, 'health.yaml'), edited);
  await until(() => regenerated() === 2);
  const contract = () => JSON.parse(readFileSync(join(generatedDir, 'health', 'contract.gen.json'), 'utf8')) as { sourceSha256: string };
  t.equal(contract().sourceSha256, specHash(edited), 'generated from the saved text');

  writeFileSync(join(specsDir, 'health.yaml'), edited.replace(/^paths:/m, 'paths: 5\nunused:'));
  await until(() => seen.err !== '');
  t.match(
    seen.err,
    /^specs\/health\.yaml: not a valid OpenAPI document: paths: must be object[^\n]*; generated\/health\/ is unchanged\. Fix the spec and save it again\.\n$/,
    'one error line',
  );
  t.equal(contract().sourceSha256, specHash(edited), 'generated/ left as it was');

  interrupt();
  t.equal(await running, 0);
  t.match(seen.out, /Stopped watching\.\n$/);
  t.equal(regenerated(), 2, 'one line per regeneration');
});
