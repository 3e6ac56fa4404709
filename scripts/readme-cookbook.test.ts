// Runs the README's cookbook: every ```sh and ```ts block between `<!-- cookbook -->` and `<!-- /cookbook -->`, in
// order, against the real reference system started as a child process on free ports, and checks that each block exits
// 0 and prints exactly what its `# => ` lines (`// => ` in TypeScript) say, `...` matching anything.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../', import.meta.url));
// One system start, a dozen recipes with bounded polling loops, and tsc: more than tap's default 120 s on a busy machine.
t.setTimeout(5 * 60_000);

/** The roles of `npm start` and the ports the cookbook's URLs name (the defaults). */
const DEFAULT_PORTS = { gateway: 8080, mapping: 8081, device: 8100, central: 8200, diagnostics: 8300, login: 8301 } as const;
type Role = keyof typeof DEFAULT_PORTS;
const ROLES = Object.keys(DEFAULT_PORTS) as Role[];

type Block = { lang: 'sh' | 'ts'; code: string; line: number; expected: string[] };

/** The fenced sh and ts blocks between the cookbook markers, with the README line each starts on. */
function cookbookBlocks(readme: string): Block[] {
  const lines = readme.split('\n');
  const start = lines.indexOf('<!-- cookbook -->');
  const end = lines.indexOf('<!-- /cookbook -->');
  if (start < 0 || end < start) throw new Error('README.md has no <!-- cookbook --> ... <!-- /cookbook --> section');
  const blocks: Block[] = [];
  for (let i = start + 1; i < end; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const close = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (close < 0 || close > end) throw new Error(`README.md line ${i + 1}: a code block that does not close before <!-- /cookbook -->`);
    const body = lines.slice(i + 1, close);
    if (open[1] === 'sh' || open[1] === 'ts') {
      const marker = open[1] === 'sh' ? /^# => ?(.*)$/ : /^\/\/ => ?(.*)$/;
      const expected = body.flatMap((l) => marker.exec(l)?.slice(1, 2) ?? []);
      blocks.push({ lang: open[1], code: body.join('\n'), line: i + 1, expected });
    }
    i = close;
  }
  return blocks;
}

/** Whether one printed line matches one expected line: literal text, `...` standing for anything. */
function lineMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

/** The roles whose own API a block calls: a URL on the role's default port with a path other than /health. */
function rolesOf(block: Block): Role[] {
  return ROLES.filter((role) => new RegExp(`localhost:${DEFAULT_PORTS[role]}/(?!health\\b)`).test(block.code));
}

/** The block with every `localhost:<default port>` pointing at the started system's port instead. */
function withPorts(code: string, ports: Record<Role, number>): string {
  return ROLES.reduce(
    (text, role) => text.replace(new RegExp(`localhost:${DEFAULT_PORTS[role]}\\b`, 'g'), `localhost:${ports[role]}`),
    code,
  );
}

/** Starts `portolan start` on free ports; resolves with each role's port once every role is listening. */
async function startSystem(env: NodeJS.ProcessEnv, teardown: (fn: () => Promise<void>) => void): Promise<Record<Role, number>> {
  const child = spawn(process.execPath, ['src/cli/main.ts', 'start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const ports: Partial<Record<Role, number>> = {};
  // Keeps reading after every role printed its URL, so the child never blocks on a full pipe.
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /^(\w+)\s+http:\/\/[^:\s]+:(\d+)/.exec(line);
      if (match && (ROLES as string[]).includes(match[1]!)) ports[match[1] as Role] = Number(match[2]);
      if (ROLES.every((role) => ports[role])) resolve(ports as Record<Role, number>);
    });
    lines.on('close', () => reject(new Error(`portolan start exited before every role listened:\n${stderr}`)));
  });
}

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs one block at the repository root: sh with bash in strict mode, ts as a TypeScript module with the source condition. */
function runBlock(block: Block, code: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const [command, args] =
    block.lang === 'sh'
      ? ['bash', ['-euo', 'pipefail', '-c', code]]
      : [process.execPath, ['--conditions=portolan-source', '--input-type=module-typescript', '-e', code]];
  return new Promise((resolve) => {
    // The time limit only stops a block that hangs (its polling loops are bounded); it is no speed check.
    execFile(command, args, { cwd: root, env, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

t.test('the README cookbook', async (t) => {
  const blocks = cookbookBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  const count = (lang: Block['lang']) => blocks.filter((b) => b.lang === lang).length;
  t.ok(count('sh') >= 8, `at least 8 sh recipes (found ${count('sh')})`);
  t.ok(count('ts') >= 4, `at least 4 ts recipes (found ${count('ts')})`);
  for (const role of ROLES)
    t.ok(
      blocks.some((b) => rolesOf(b).includes(role)),
      `a recipe calls the ${role} role's API (localhost:${DEFAULT_PORTS[role]}/..., not only /health)`,
    );
  for (const block of blocks) t.ok(block.expected.length > 0, `the ${block.lang} block at README.md:${block.line} says what it prints`);
  // Starts nothing when the blocks themselves are wrong.
  if (!t.passing()) return;

  const dir = mkdtempSync(join(tmpdir(), 'portolan-cookbook-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The blocks' `node` and `npm run` are the project's Node 24.
    PATH: [join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
    ...Object.fromEntries(ROLES.map((role) => [`PORTOLAN_${role.toUpperCase()}_PORT`, '0'])),
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
  delete env.PORTOLAN_CONFIG;
  const ports = await startSystem(env, (fn) => t.teardown(fn));

  for (const block of blocks) {
    await t.test(`${block.lang} block at README.md:${block.line}`, async (t) => {
      const run = await runBlock(block, withPorts(block.code, ports), env);
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
  const blocks = cookbookBlocks(readFileSync(join(root, 'README.md'), 'utf8')).filter((b) => b.lang === 'ts');
  // Inside the repository (tap's fixture folder), so `portolan/...` resolves to this package itself.
  const dir = t.testdir(Object.fromEntries(blocks.map((b) => [`readme-line-${b.line}.ts`, `${b.code}\nexport {};\n`])));
  const tsconfig = {
    extends: relative(dir, join(root, 'tsconfig.json')),
    compilerOptions: { customConditions: ['portolan-source'] },
    include: ['*.ts'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const output = await new Promise<{ code: number; text: string }>((resolve) => {
    execFile(process.execPath, [tsc, '-p', dir], { cwd: root }, (error, stdout, stderr) =>
      resolve({
        code: error ? 1 : 0,
        text: `${stdout}${stderr}`.replaceAll(relative(root, dir), 'README.md ts block').replaceAll(dir, 'README.md ts block'),
      }),
    );
  });
  t.equal(output.code, 0, `tsc finds no error in the ${blocks.length} ts blocks`, { output: output.text });
});

t.test('expected lines: literal text, ... matches anything', async (t) => {
  t.ok(lineMatches('{"id":"...","status":"FINISHED"}', '{"id":"abc-1","status":"FINISHED"}'));
  t.notOk(lineMatches('{"id":"...","status":"FINISHED"}', '{"id":"abc-1","status":"FAILED"}'));
  t.notOk(lineMatches('200', '2000'), 'anchored at both ends');
  t.ok(lineMatches('a.b', 'a.b'));
  t.notOk(lineMatches('a.b', 'axb'), 'a dot is literal');
});
