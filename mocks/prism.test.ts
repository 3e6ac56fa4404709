import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Imports `module` (relative to the repository root) in a fresh Node whose resolver refuses msw, as in an
 * install without it; prints the module's export names.
 */
function importWithoutMsw(module: string) {
  const code = `
    import { registerHooks } from 'node:module';
    registerHooks({
      resolve(specifier, context, next) {
        if (/^msw(\\/|$)/.test(specifier)) throw new Error('msw is not installed (' + specifier + ' from ' + context.parentURL + ')');
        return next(specifier, context);
      },
    });
    const mod = await import(${JSON.stringify(module)});
    console.log(JSON.stringify(Object.keys(mod).sort()));
  `;
  return spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
}

t.test('portolan/mocks/prism loads without msw and has the Prism part of the surface', async (t) => {
  const run = importWithoutMsw('./mocks/prism.ts');
  t.equal(run.status, 0, run.stderr);
  t.same(JSON.parse(run.stdout), [
    'MOCK_PORT_SHIFT',
    'PRISM_DYNAMIC_DEVIATIONS',
    'PRISM_DYNAMIC_SEED',
    'PRISM_STATIC_DEVIATIONS',
    'startPrismMocks',
  ]);
});

t.test('portolan/mocks still exports the Prism part with the MSW handlers (and it is what needs msw)', async (t) => {
  const all = await import('./index.ts');
  const prism = await import('./prism.ts');
  for (const [name, value] of Object.entries(prism)) t.equal((all as Record<string, unknown>)[name], value, name);
  t.type(all.createStatelessHandlers, 'function');
  t.type(all.createStatefulHandlers, 'function');
  t.type(all.createCatchAllHandler, 'function');
  const run = importWithoutMsw('./mocks/index.ts');
  t.not(run.status, 0, 'the check sees msw when a module reaches it');
  t.match(run.stderr, /msw is not installed/);
});
