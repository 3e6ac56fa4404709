// Runs the docs' recipes: every ```sh and ```ts block between `<!-- cookbook -->` and `<!-- /cookbook -->` in
// README.md, then in the interface pages in the order docs/cookbook.md lists them, against the real reference
// system started as a child process with a port offset (PORTOLAN_PORT_OFFSET, the setting the recipes compute
// their URLs from), and checks that each block exits 0 and prints exactly what its `# => ` lines (`// => ` in
// TypeScript) say, `...` matching anything. No recipe may name a role's port itself.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../', import.meta.url));
// One system start, a dozen recipes with bounded polling loops, and tsc: more than tap's default 120 s on a busy machine.
t.setTimeout(5 * 60_000);

/** The roles of `npm start` and their default ports, which PORTOLAN_PORT_OFFSET moves. */
const DEFAULT_PORTS = { gateway: 8080, mapping: 8081, device: 8100, central: 8200, diagnostics: 8300, login: 8301 } as const;
type Role = keyof typeof DEFAULT_PORTS;
const ROLES = Object.keys(DEFAULT_PORTS) as Role[];

type Block = { page: string; lang: 'sh' | 'ts'; code: string; line: number; expected: string[] };

/** The fenced sh and ts blocks between cookbook markers (indented ones too, as in a list), with the line each starts on. */
function cookbookBlocks(page: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let inside = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '<!-- cookbook -->') inside = true;
    else if (line === '<!-- /cookbook -->') inside = false;
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const close = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (close < 0) throw new Error(`${page}:${i + 1}: a code block that does not close`);
    const indent = open[1]!.length;
    const body = lines.slice(i + 1, close).map((l) => l.slice(Math.min(indent, /^\s*/.exec(l)![0].length)));
    if (inside && (open[2] === 'sh' || open[2] === 'ts')) {
      const marker = open[2] === 'sh' ? /^# => ?(.*)$/ : /^\/\/ => ?(.*)$/;
      const expected = body.flatMap((l) => marker.exec(l)?.slice(1, 2) ?? []);
      blocks.push({ page, lang: open[2], code: body.join('\n'), line: i + 1, expected });
    }
    i = close;
  }
  if (inside) throw new Error(`${page}: <!-- cookbook --> without <!-- /cookbook -->`);
  return blocks;
}

/** The pages whose recipes run, in order: README.md, then the pages docs/cookbook.md links under "The recipes, in order". */
function cookbookPages(): string[] {
  const guide = readFileSync(join(root, 'docs', 'cookbook.md'), 'utf8');
  const section = /\n## The recipes, in order\n([\s\S]*?)(?=\n## |$)/.exec(guide)?.[1] ?? '';
  const pages = [...section.matchAll(/\]\(([^)#]+\.md)#cookbook\)/g)].map((m) => relative(root, join(root, 'docs', m[1]!)));
  return ['README.md', ...new Set(pages)];
}

/** Every page that holds recipes (the markers): README.md and any docs page, listed in docs/cookbook.md or not. */
function pagesWithRecipes(): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
  return ['README.md', ...docs].filter((page) => /^\s*<!-- cookbook -->\s*$/m.test(readFileSync(join(root, page), 'utf8')));
}

/** Whether one printed line matches one expected line: literal text, `...` standing for anything. */
function lineMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

/** The roles whose port a block computes from the offset (`8080 + ...`), so whose API it calls. */
function rolesOf(block: Block): Role[] {
  return ROLES.filter((role) => new RegExp(`\\b${DEFAULT_PORTS[role]}\\s*\\+`).test(block.code));
}

/** A role's default port written into a URL: what no recipe may do (PORTOLAN_PORT_OFFSET would not move it). */
const FIXED_PORT = new RegExp(`(?:localhost|127\\.0\\.0\\.1|\\[::1\\]|0\\.0\\.0\\.0):(?:${Object.values(DEFAULT_PORTS).join('|')})\\b`);

/** Whether a port is free on the loopback address. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port offset under which every role's port is free now (tried at random places above the usual ranges). */
async function freeOffset(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = 20_000 + Math.floor(Math.random() * 3000) * 10;
    const free = await Promise.all(ROLES.map((role) => portFree(DEFAULT_PORTS[role] + offset)));
    if (free.every(Boolean)) return offset;
  }
  throw new Error('no port offset with every role port free');
}

/** Asks a URL until it answers 200; false when the process exited or the attempts ran out. */
async function answers(url: string, exited: () => boolean): Promise<boolean> {
  for (let attempt = 0; attempt < 600 && !exited(); attempt++) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return true;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Starts `portolan start` with the offset; resolves once every role answers `/health` at its default port + offset. */
async function startSystem(env: NodeJS.ProcessEnv, offset: number, teardown: (fn: () => Promise<void>) => void): Promise<void> {
  const child = spawn(process.execPath, ['src/cli/main.ts', 'start'], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  teardown(async () => {
    if (!gone()) child.kill('SIGTERM');
    await exited;
  });
  for (const role of ROLES) {
    const url = `http://127.0.0.1:${DEFAULT_PORTS[role] + offset}/health`;
    if (!(await answers(url, gone)))
      throw new Error(`the ${role} role does not answer at ${url} (PORTOLAN_PORT_OFFSET=${offset}):\n${stderr.slice(-4000)}`);
  }
}

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs one block at the repository root: sh with bash in strict mode, ts as a TypeScript module with the source condition. */
function runBlock(block: Block, env: NodeJS.ProcessEnv): Promise<Run> {
  const [command, args] =
    block.lang === 'sh'
      ? ['bash', ['-euo', 'pipefail', '-c', block.code]]
      : [process.execPath, ['--conditions=portolan-source', '--input-type=module-typescript', '-e', block.code]];
  return new Promise((resolve) => {
    // The time limit only stops a block that hangs (its polling loops are bounded); it is no speed check.
    execFile(command, args, { cwd: root, env, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

const pages = cookbookPages();
const blocks = pages.flatMap((page) => cookbookBlocks(page, readFileSync(join(root, page), 'utf8')));
const where = (block: Block) => `${block.page}:${block.line}`;

t.test('the recipes are where docs/cookbook.md says, and say what they print', async (t) => {
  t.same(
    pagesWithRecipes().filter((page) => !pages.includes(page)),
    [],
    'every page with recipes is listed in docs/cookbook.md (a page left out would never run)',
  );
  for (const page of pages)
    t.ok(
      blocks.some((b) => b.page === page),
      `${page} has recipes`,
    );
  const count = (lang: Block['lang']) => blocks.filter((b) => b.lang === lang).length;
  t.ok(count('sh') >= 8, `at least 8 sh recipes (found ${count('sh')})`);
  t.ok(count('ts') >= 5, `at least 5 ts recipes (found ${count('ts')})`);
  for (const role of ROLES)
    t.ok(
      blocks.some((b) => rolesOf(b).includes(role)),
      `a recipe calls the ${role} role (${DEFAULT_PORTS[role]} + the offset)`,
    );
  for (const block of blocks) {
    t.ok(block.expected.length > 0, `the ${block.lang} block at ${where(block)} says what it prints`);
    t.notOk(FIXED_PORT.exec(block.code)?.[0], `the ${block.lang} block at ${where(block)} names no role's port itself`);
  }
});

t.test('every recipe runs against a started system and prints what it says', async (t) => {
  // Starts nothing when the blocks themselves are wrong.
  if (blocks.length === 0) return t.fail('no recipes found');
  const dir = mkdtempSync(join(tmpdir(), 'portolan-cookbook-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const offset = await freeOffset();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PORTOLAN_')));
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    // The blocks' `node` and `npm run` are the project's Node 24.
    PATH: [join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
    PORTOLAN_PORT_OFFSET: String(offset),
    PORTOLAN_DATABASE: `sqlite:${join(dir, 'p.db')}`,
    PORTOLAN_DEVICE_DATA_DIR: join(dir, 'device'),
    PORTOLAN_SNAPSHOT_DATA_DIR: join(dir, 'snapshots'),
    PORTOLAN_ADMIN_PASSWORD: 's3cret',
    PORTOLAN_DEVICE_HOSTNAME: 'sslo-device-1.example.net',
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
    // Every answer the recipes get is also checked against its spec (a breach is a 500).
    PORTOLAN_VALIDATE_RESPONSES: 'true',
  };
  await startSystem(env, offset, (fn) => t.teardown(fn));

  for (const block of blocks) {
    await t.test(`${block.lang} block at ${where(block)}`, async (t) => {
      const run = await runBlock(block, env);
      const printed = run.stdout.replace(/\n$/, '').split('\n');
      const context = { stdout: run.stdout, stderr: run.stderr.slice(-4000), expected: block.expected };
      t.equal(run.code, 0, 'exits 0', context);
      t.equal(printed.length, block.expected.length, `prints ${block.expected.length} line(s)`, context);
      block.expected.forEach((expected, i) => {
        t.ok(lineMatches(expected, printed[i] ?? ''), `line ${i + 1} matches ${JSON.stringify(expected)}`, { actual: printed[i] });
      });
    });
  }
});

t.test('every ts recipe typechecks against the package exports, as an installed user compiles it', async (t) => {
  const ts = blocks.filter((b) => b.lang === 'ts');
  const name = (b: Block) => `${b.page.replace(/\W+/g, '-')}-${b.line}.ts`;
  // Inside the repository (tap's fixture folder), so `portolan/...` resolves to this package itself.
  const dir = t.testdir(Object.fromEntries(ts.map((b) => [name(b), `${b.code}\nexport {};\n`])));
  const tsconfig = {
    extends: relative(dir, join(root, 'tsconfig.json')),
    compilerOptions: { customConditions: ['portolan-source'] },
    include: ['*.ts'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const output = await new Promise<{ code: number; text: string }>((resolve) => {
    execFile(process.execPath, [tsc, '-p', dir], { cwd: root }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, text: `${stdout}${stderr}`.replaceAll(relative(root, dir), 'recipe').replaceAll(dir, 'recipe') }),
    );
  });
  t.equal(output.code, 0, `tsc finds no error in the ${ts.length} ts blocks`, { output: output.text });
});

t.test('reading the blocks: markers, indentation, expected lines', async (t) => {
  const page = [
    '```sh',
    'echo outside',
    '# => outside',
    '```',
    '<!-- cookbook -->',
    '1. A list item:',
    '',
    '   ```ts',
    '   console.log(1);',
    '   // => 1',
    '   ```',
    '   <!-- /cookbook -->',
  ].join('\n');
  const found = cookbookBlocks('x.md', page);
  t.same(
    found.map((b) => [b.lang, b.line, b.code, b.expected]),
    [['ts', 8, 'console.log(1);\n// => 1', ['1']]],
    'only blocks between the markers, indentation removed',
  );
  t.throws(() => cookbookBlocks('x.md', '<!-- cookbook -->\n```sh\necho'), /x\.md:2: a code block that does not close/);
  t.ok(FIXED_PORT.test('curl localhost:8080/x'), 'a fixed port is found');
  t.notOk(FIXED_PORT.test('curl 127.0.0.1:$((8080 + OFFSET))/x'), 'a computed one is not');
  t.same(rolesOf({ page: '', lang: 'sh', code: 'X=$((8301 + ${PORTOLAN_PORT_OFFSET:-0}))', line: 1, expected: [] }), ['login']);
  t.ok(lineMatches('{"id":"...","status":"FINISHED"}', '{"id":"abc-1","status":"FINISHED"}'));
  t.notOk(lineMatches('{"id":"...","status":"FINISHED"}', '{"id":"abc-1","status":"FAILED"}'));
  t.notOk(lineMatches('200', '2000'), 'anchored at both ends');
  t.ok(lineMatches('a.b', 'a.b'));
  t.notOk(lineMatches('a.b', 'axb'), 'a dot is literal');
});
