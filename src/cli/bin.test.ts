// bin/portolan.js, the command's entry: one line on a Node.js too old for Portolan, and the command itself
// from any folder, through a link as node_modules/.bin has it, and from the package's build when installed.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'portolan.js');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };
const neededMajor = /^>=(\d+)$/.exec(manifest.engines.node)?.[1];

/** Runs `file` with `node` (this one by default) in `cwd`; its exit code and both outputs. */
function run(file: string, args: string[], options: { node?: string; nodeArgs?: string[]; cwd?: string } = {}) {
  const child = spawnSync(options.node ?? process.execPath, [...(options.nodeArgs ?? []), file, ...args], {
    cwd: options.cwd ?? tmpdir(),
    encoding: 'utf8',
    env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent' },
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

/** A Node.js older than package.json's "engines" on this machine (outside node_modules), with its version. */
function olderNode(): { path: string; version: string } | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin', '/bin'];
  for (const dir of dirs.filter((d) => d !== '' && !d.includes('node_modules'))) {
    const path = join(dir, 'node');
    const probe = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const version = probe.status === 0 ? probe.stdout.trim().replace(/^v/, '') : '';
    if (version !== '' && Number(version.split('.')[0]) < Number(neededMajor)) return { path, version };
  }
  return undefined;
}

t.test('package.json asks for Node.js >=<major>, and bin/portolan.js falls back to the same major', async (t) => {
  t.ok(neededMajor, `engines.node is ">=<major>" (found ${manifest.engines.node})`);
  t.match(readFileSync(bin, 'utf8'), new RegExp(`const NEEDED_NODE = '${neededMajor}';`), 'NEEDED_NODE equals engines.node');
});

t.test('an older Node.js gets one line naming the version needed, and exit code 1', async (t) => {
  t.testdir({});
  const old = olderNode();
  // This machine's own old Node when it has one; else this Node told it is 20.0.0 before the file loads.
  const result = old
    ? run(bin, ['--help'], { node: old.path })
    : run(bin, ['--help'], {
        nodeArgs: ['--import', `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.0.0'})`],
      });
  t.comment(old ? `with ${old.path} (Node.js ${old.version})` : 'no older Node.js here: this one, its version faked');
  t.equal(result.code, 1);
  t.equal(result.out, '');
  t.equal(
    result.err,
    `portolan needs Node.js ${neededMajor} or newer; this is Node.js ${old?.version ?? '20.0.0'} (https://nodejs.org).\n`,
  );
});

t.test('from any folder, and through a link as node_modules/.bin has it: --version, --help, a usage error', async (t) => {
  const dir = t.testdir({ '.bin': {} });
  symlinkSync(bin, join(dir, '.bin', 'portolan'));
  for (const entry of [bin, join(dir, '.bin', 'portolan')]) {
    const version = run(entry, ['--version'], { cwd: dir });
    t.same(version, { code: 0, out: `${manifest.version}\n`, err: '' }, `${entry} --version`);
    t.same(run(entry, ['-V'], { cwd: dir }).out, `${manifest.version}\n`, '-V');
    const help = run(entry, ['--help'], { cwd: dir });
    t.equal(help.code, 0);
    t.match(help.out, /^Usage: portolan \[options\] \[command\]\n/);
    t.match(help.out, /start .*\n[\s\S]*generate /, 'the commands');
    t.equal(help.err, '');
    t.same(run(entry, ['strat'], { cwd: dir }), {
      code: 2,
      out: '',
      err: "portolan: unknown command 'strat' (Did you mean start?)\nRun 'portolan --help' for usage.\n",
    });
  }
});

t.test("a checkout runs src/cli/main.ts; the package (no src/, or under node_modules) runs dist/'s build", async (t) => {
  const dir = t.testdir({});
  /** A copy of bin/portolan.js in a folder laid out as the package, with stand-ins for the two entries. */
  const layout = (at: string, entries: { source?: boolean; dist?: boolean }, engines = manifest.engines.node) => {
    mkdirSync(join(at, 'bin'), { recursive: true });
    cpSync(bin, join(at, 'bin', 'portolan.js'));
    writeFileSync(join(at, 'package.json'), JSON.stringify({ type: 'module', engines: { node: engines } }));
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(at, file)), { recursive: true });
      writeFileSync(join(at, file), text);
    };
    if (entries.source) write('src/cli/main.ts', "const from: string = 'source'; console.log(from, process.argv.slice(2).join(' '));\n");
    if (entries.dist) write('dist/src/cli/main.js', "console.log('dist', process.argv.slice(2).join(' '));\n");
    return join(at, 'bin', 'portolan.js');
  };
  t.same(run(layout(join(dir, 'checkout'), { source: true, dist: true }), ['start']), { code: 0, out: 'source start\n', err: '' });
  t.same(run(layout(join(dir, 'package'), { dist: true }), ['--help']), { code: 0, out: 'dist --help\n', err: '' });
  t.same(
    run(layout(join(dir, 'node_modules', 'portolan'), { source: true, dist: true }), ['-V']),
    { code: 0, out: 'dist -V\n', err: '' },
    'installed: the build, even if sources came along',
  );
  const missing = run(layout(join(dir, 'empty'), {}), []);
  t.equal(missing.code, 1);
  t.match(
    missing.err,
    /^portolan cannot load: \S+main\.js is missing\. In a checkout of Portolan run npm ci; else reinstall portolan\.\n$/,
  );
  const newer = run(layout(join(dir, 'future'), { dist: true }, '>=999.1'), []);
  t.same(
    newer,
    { code: 1, out: '', err: `portolan needs Node.js 999.1 or newer; this is Node.js ${process.versions.node} (https://nodejs.org).\n` },
    'the version needed is read from package.json',
  );
});
