// What a start loads: the composition root and every module, but not the libraries only some requests
// need (loaded on first use). Each costs every process its memory whether or not it is used:
// pdfkit ~30 MB (the PDF report of interface C), pino-pretty (readable logs, only on a terminal). And
// each module loaded costs a start its time (about 1 ms a module with the compile cache): ajv's 2020
// draft only for the response checks of tests and mocks, commander only for a command line to parse.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The modules a fresh process loads running `script` (ESM, from the project root): package folders under node_modules, and the project's own files. */
function loadedBy(script: string): { packages: string[]; files: string[] } {
  const hook = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });
    process.on('exit', () => {
      const packages = new Set([...seen].map((url) => /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1]).filter(Boolean));
      const files = [...seen].filter((url) => url.startsWith('file:')).map((url) => url.slice(${JSON.stringify(`file://${ROOT}`)}.length));
      console.log(JSON.stringify({ packages: [...packages].sort(), files }));
    });
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', `${hook}\n${script}`], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { packages: string[]; files: string[] };
}

t.test('a start does not load pdfkit or pino-pretty; it does load what every request needs', async (t) => {
  const { packages: loaded } = loadedBy(`
    await import('./src/app/system.ts');
    const { createLogger } = await import('./src/lib/logger.ts');
    createLogger({ level: 'info', format: 'json' });
  `);
  t.ok(loaded.includes('openapi-backend') && loaded.includes('pino'), `the hook sees the packages a start needs (${loaded.length})`);
  t.notOk(loaded.includes('pdfkit'), 'pdfkit is loaded with the first PDF report');
  t.notOk(loaded.includes('pino-pretty'), 'pino-pretty is loaded only for readable logs');
});

t.test("a start without response checks does not load ajv's 2020 draft", async (t) => {
  const { files } = loadedBy(`await import('./src/app/system.ts');`);
  t.ok(files.includes('src/app/system.ts') && files.includes('node_modules/ajv/dist/ajv.js'), 'the hook sees the files a start loads');
  t.notOk(files.includes('src/lib/contract/response-check.ts'), 'the response checker is loaded when the checks are on');
  t.notOk(files.includes('node_modules/ajv/dist/2020.js'), "and with it ajv's 2020 draft");
});

t.test('`portolan start` does not load commander; another command line does', async (t) => {
  const io = `{ stdout: { write: () => true }, stderr: { write: () => true }, stdin: process.stdin, env: { PORTOLAN_MAPPING_PORT: 'abc' } }`;
  // A wrong setting: the start ends at its configuration, having loaded what a start loads first.
  const start = loadedBy(`
    const { runPortolan } = await import('./src/cli/commands.ts');
    if ((await runPortolan(['start'], ${io})) !== 2) throw new Error('the wrong setting was not refused');
  `);
  t.ok(start.files.includes('src/app/system.ts'), 'the start loaded the system');
  t.notOk(start.packages.includes('commander'), 'but not commander');
  const help = loadedBy(`
    const { runPortolan } = await import('./src/cli/commands.ts');
    await runPortolan(['start', '--help'], ${io});
  `);
  t.ok(help.packages.includes('commander'), '`start --help` is parsed by commander');
});
