import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INTERFACES, loadSpec, specPath } from '../lib/spec-catalog.ts';
import {
  contractPath,
  readCompiledContract,
  serializeContract,
  specHash,
  StaleContractError,
  type CompiledContract,
} from './compiled-contract.ts';

/** A generated/ directory of our own holding one contract for `name`. */
function generatedDirWith(t: { teardown(fn: () => void): void }, name: string, contract: CompiledContract | undefined): string {
  const dir = `${mkdtempSync(join(tmpdir(), 'portolan-contract-'))}/`;
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, name));
  if (contract) writeFileSync(contractPath(name, dir), serializeContract(contract));
  return dir;
}

/** Every object and array reachable from `value`, counting how often each is met. */
function sharedObjects(value: unknown): number {
  const seen = new Set<object>();
  let shared = 0;
  const walk = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    if (seen.has(node)) {
      shared++;
      return;
    }
    seen.add(node);
    for (const child of Object.values(node)) walk(child);
  };
  walk(value);
  return shared;
}

t.test('each compiled contract holds its spec as written and fully dereferenced, no object in two places', async (t) => {
  for (const { name } of INTERFACES) {
    const contract = readCompiledContract(name);
    t.same(contract.document, loadSpec(name), `${name}: the document as written`);
    t.notOk(JSON.stringify(contract.dereferenced).includes('"$ref"'), `${name}: no $ref left`);
    t.equal(
      sharedObjects(contract.dereferenced),
      0,
      `${name}: no shared sub-objects (openapi-backend's decycle would turn them into $refs)`,
    );
    t.match(contract['//'], /Never edit this file.*npm run generate/, `${name}: says it is generated`);
  }
});

t.test('a spec edited since its contract was compiled is refused, saying to run npm run generate', async (t) => {
  const contract = readCompiledContract('health');
  const dir = generatedDirWith(t, 'health', {
    ...contract,
    sourceSha256: specHash(`${readFileSync(specPath('health'), 'utf8')}\n# edited`),
  });
  t.throws(
    () => readCompiledContract('health', dir),
    new StaleContractError('specs/health.yaml changed since generated/health/contract.gen.json was compiled: run `npm run generate`.'),
  );
});

t.test('a missing contract, or one from another generator version, is refused the same way', async (t) => {
  t.throws(() => readCompiledContract('health', generatedDirWith(t, 'health', undefined)), {
    name: 'StaleContractError',
    message: /missing: run `npm run generate`/,
  });
  const older = { ...readCompiledContract('health'), format: 0 };
  t.throws(() => readCompiledContract('health', generatedDirWith(t, 'health', older)), {
    name: 'StaleContractError',
    message: /run `npm run generate`/,
  });
});

t.test('the spec hash ignores Windows line endings', async (t) => {
  t.equal(specHash('a: 1\r\nb: 2\r\n'), specHash('a: 1\nb: 2\n'));
});

t.test('loading every runtime reads the compiled contracts: swagger-parser is never loaded', async (t) => {
  // In a fresh process, so that nothing loaded by this test file counts.
  const script = `
    import { createRequire } from 'node:module';
    import { INTERFACES } from './src/lib/spec-catalog.ts';
    import { loadInterfaceRuntime } from './src/server/interface-runtime.ts';
    await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify(loaded.filter((f) => f.includes('/node_modules/@apidevtools/swagger-parser/'))));`;
  const root = new URL('../../', import.meta.url);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  t.same(JSON.parse(out), [], 'no module of swagger-parser loaded');
});
