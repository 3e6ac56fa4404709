// What a start loads: the composition root and every module, but not the libraries only some requests
// need (loaded on first use). Each costs every process its memory whether or not it is used:
// pdfkit ~30 MB (the PDF report of interface C), pino-pretty (readable logs, only on a terminal).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The package folders under node_modules a fresh process loads by importing the system and building a JSON logger. */
function packagesLoadedByAStart(): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ load(url, context, next) { const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url); if (m) seen.add(m[1]); return next(url, context); } });
    await import('./src/app/system.ts');
    const { createLogger } = await import('./src/lib/logger.ts');
    createLogger({ level: 'info', format: 'json' });
    console.log(JSON.stringify([...seen].sort()));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as string[];
}

t.test('a start does not load pdfkit or pino-pretty; it does load what every request needs', async (t) => {
  const loaded = packagesLoadedByAStart();
  t.ok(loaded.includes('openapi-backend') && loaded.includes('pino'), `the hook sees the packages a start needs (${loaded.length})`);
  t.notOk(loaded.includes('pdfkit'), 'pdfkit is loaded with the first PDF report');
  t.notOk(loaded.includes('pino-pretty'), 'pino-pretty is loaded only for readable logs');
});
