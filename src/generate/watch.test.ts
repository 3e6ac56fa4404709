// The spec watch of `portolan generate --watch`, on a folder of small specs, with the folder watcher, the timers
// and the generation replaced: which saves regenerate what, when, and what is printed.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { specHash } from '../server/compiled-contract.ts';
import { watchSpecs, type FolderWatch, type WatchSpecsOptions } from './watch.ts';

const spec = (title: string, letter: string, paths = '{}') =>
  `openapi: 3.1.0\ninfo:\n  title: ${title}\n  version: '1.0.0'\n  x-interface: ${letter}\npaths: ${paths}\n`;

/** A folder watcher the test drives: `save(file)` is what fs.watch reports for a write. */
function fakeWatch() {
  let onChange: (file: string) => void = () => undefined;
  let onError: (error: Error) => void = () => undefined;
  const state = { closed: false };
  const watch: FolderWatch = (_dir, change, error) => {
    onChange = change;
    onError = error;
    return { close: () => void (state.closed = true) };
  };
  return { watch, state, event: (file: string) => onChange(file), fail: (error: Error) => onError(error) };
}

/** Lets the work a fired timer started (reads, the stubbed validation and generation) finish. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** specs/ with alpha (up to date in generated/), beta (never generated) and a YAML file that is no spec. */
function setup(t: TapTest, options: Partial<WatchSpecsOptions> = {}) {
  const dir = t.testdir({ specs: {}, generated: {} });
  const specsDir = join(dir, 'specs');
  const generatedDir = join(dir, 'generated');
  const write = (file: string, text: string) => writeFileSync(join(specsDir, file), text);
  write('alpha.yaml', spec('Alpha', 'A'));
  write('beta.yaml', spec('Beta', 'B'));
  write('releases.yaml', 'releases: []\n');
  mkdirSync(join(generatedDir, 'alpha'));
  writeFileSync(join(generatedDir, 'alpha', 'contract.gen.json'), JSON.stringify({ sourceSha256: specHash(spec('Alpha', 'A')) }));
  const clock = createFakeClock();
  const folder = fakeWatch();
  const regenerated: string[] = [];
  const lines: string[] = [];
  const errors: string[] = [];
  const watching = watchSpecs({
    specsDir,
    generatedDir,
    regenerate: async (name) => void regenerated.push(name),
    validate: async () => undefined,
    watch: folder.watch,
    timers: clock,
    clock,
    print: (line) => lines.push(line),
    printError: (line) => errors.push(line),
    ...options,
  });
  t.teardown(() => watching.stop());
  /** Writes a spec and reports the save, as an editor and fs.watch do. */
  const save = (file: string, text: string) => {
    write(file, text);
    folder.event(file);
  };
  return { clock, folder, regenerated, lines, errors, watching, save, write };
}

t.test('at start: a spec never generated (or changed since) is regenerated, one up to date is not', async (t) => {
  const { regenerated, lines, errors, watching } = setup(t);
  await watching.ready;
  t.same(regenerated, ['beta']);
  t.same(lines, ['specs/beta.yaml: regenerated generated/beta/ (0.0 s)']);
  t.same(errors, []);
});

t.test('a save regenerates its interface once, after the debounce: not at each event, not before', async (t) => {
  const { clock, regenerated, lines, watching, save, folder } = setup(t);
  await watching.ready;
  regenerated.length = 0;
  lines.length = 0;
  save('alpha.yaml', spec('Alpha v2', 'A'));
  clock.advance(100);
  folder.event('alpha.yaml'); // an editor's save is often several events
  clock.advance(150);
  folder.event('alpha.yaml');
  clock.advance(199);
  await settle();
  t.same(regenerated, [], 'nothing before 200 ms of quiet');
  clock.advance(1);
  await settle();
  t.same(regenerated, ['alpha'], 'once');
  t.same(lines, ['specs/alpha.yaml: regenerated generated/alpha/ (0.0 s)'], 'one line per regeneration');
  folder.event('alpha.yaml');
  clock.advance(200);
  await settle();
  t.same(regenerated, ['alpha'], 'a save that changed nothing regenerates nothing');
});

t.test('two specs saved together are both regenerated, one after the other', async (t) => {
  let running = 0;
  let overlapped = false;
  const { clock, regenerated, watching, save } = setup(t, {
    regenerate: async (name) => {
      overlapped ||= running > 0;
      running++;
      await settle();
      running--;
      regenerated.push(name);
    },
  });
  await watching.ready;
  regenerated.length = 0;
  save('alpha.yaml', spec('Alpha v2', 'A'));
  save('beta.yaml', spec('Beta v2', 'B'));
  clock.advance(200);
  for (let i = 0; i < 5; i++) await settle();
  t.same(regenerated.sort(), ['alpha', 'beta']);
  t.notOk(overlapped, 'never two generations at once');
});

t.test('an invalid save is one error line and no generation; the watch goes on and the fixed save regenerates', async (t) => {
  const { clock, regenerated, lines, errors, watching, save } = setup(t, { validate: undefined });
  await watching.ready;
  regenerated.length = 0;
  lines.length = 0;
  const changeAndWait = async (text: string) => {
    save('alpha.yaml', text);
    clock.advance(200);
    while (lines.length + errors.length === 0) await settle();
  };
  await changeAndWait(spec('Alpha', 'A', '5'));
  t.same(errors, [
    'specs/alpha.yaml: not a valid OpenAPI document: paths: must be object; generated/alpha/ is unchanged. Fix the spec and save it again.',
  ]);
  errors.length = 0;
  await changeAndWait(`${spec('Alpha', 'A')}  broken: [\n`);
  t.equal(errors.length, 1, 'one line');
  t.match(errors[0], /^specs\/alpha\.yaml: not YAML \(.+\).* generated\/alpha\/ is unchanged\. Fix the spec and save it again\.$/);
  errors.length = 0;
  await changeAndWait(
    spec('Alpha', 'A', "\n  /x:\n    get:\n      responses:\n        '200':\n          $ref: '#/components/responses/Nope'"),
  );
  t.match(errors, [
    /^specs\/alpha\.yaml: not a valid OpenAPI document: .*#\/components\/responses\/Nope.*; generated\/alpha\/ is unchanged\./,
  ]);
  errors.length = 0;
  t.same(regenerated, [], 'no generation from an invalid spec');
  await changeAndWait(spec('Alpha v3', 'A'));
  t.same(errors, []);
  t.same(regenerated, ['alpha']);
  t.same(lines, ['specs/alpha.yaml: regenerated generated/alpha/ (0.0 s)']);
});

t.test('a failed generation is one line; files that are no spec are left alone', async (t) => {
  const { clock, regenerated, lines, errors, watching, save, folder } = setup(t, {
    regenerate: async (name) => {
      regenerated.push(name);
      if (name === 'alpha') throw new Error('hey-api could not write\nstack line');
    },
  });
  await watching.ready;
  regenerated.length = 0;
  lines.length = 0;
  save('alpha.yaml', spec('Alpha v2', 'A'));
  save('releases.yaml', 'releases: [1]\n');
  for (const other of ['README.md', '.alpha.yaml.swp', 'alpha.yaml~', '4913']) folder.event(other);
  clock.advance(200);
  await settle();
  t.same(regenerated, ['alpha'], 'only the spec');
  t.same(errors, [
    'specs/alpha.yaml: generation failed: hey-api could not write; generated/alpha/ is unchanged. Fix the spec and save it again.',
  ]);
  t.same(lines, []);
});

t.test('only the named interfaces are watched', async (t) => {
  const { clock, regenerated, watching, save } = setup(t, { names: ['alpha'] });
  await watching.ready;
  t.same(regenerated, [], 'beta is not named: not regenerated at start');
  save('beta.yaml', spec('Beta v2', 'B'));
  save('alpha.yaml', spec('Alpha v2', 'A'));
  clock.advance(200);
  await settle();
  t.same(regenerated, ['alpha']);
});

t.test('stop closes the watcher and waits for a generation under way; later events do nothing', async (t) => {
  let finish: () => void = () => undefined;
  const { clock, regenerated, watching, save, folder } = setup(t, {
    regenerate: (name) =>
      new Promise<void>((resolve) => {
        regenerated.push(name);
        finish = resolve;
      }),
  });
  await settle();
  t.same(regenerated, ['beta'], 'beta is being generated');
  let stopped = false;
  const stopping = watching.stop().then(() => (stopped = true));
  await settle();
  t.ok(folder.state.closed, 'the watcher is closed at once');
  t.notOk(stopped, 'stop waits for the generation under way');
  finish();
  await stopping;
  save('alpha.yaml', spec('Alpha v2', 'A'));
  clock.advance(1000);
  await settle();
  t.same(regenerated, ['beta'], 'nothing after stop');
});

t.test('a watcher that fails is one line, and the watch ends', async (t) => {
  const { errors, watching, folder } = setup(t);
  await watching.ready;
  folder.fail(new Error('ENOENT: no such file or directory, watch\nmore'));
  await watching.failed;
  t.match(errors, [/^Watching .+specs failed: ENOENT: no such file or directory, watch$/]);
  t.ok(folder.state.closed);
});
