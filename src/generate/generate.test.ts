import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTERFACES } from '../lib/spec-catalog.ts';
import { generate } from './index.ts';

const committed = fileURLToPath(new URL('../../generated/', import.meta.url));

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

t.test('generated/ is exactly what a fresh generation from specs/ produces', async (t) => {
  const fresh = mkdtempSync(join(tmpdir(), 'portolan-generated-'));
  t.teardown(() => rmSync(fresh, { recursive: true, force: true }));
  await generate(fresh);
  const freshFiles = listFiles(fresh)
    .map((f) => relative(fresh, f))
    .sort();
  const committedFiles = listFiles(committed)
    .map((f) => relative(committed, f))
    .sort();
  const advice =
    'generated/ is out of date with specs/ (a spec edited without regenerating, or a generated file edited by hand): run `npm run generate` and commit generated/';
  t.same(committedFiles, freshFiles, `the same files; ${advice}`);
  const drifted = freshFiles.filter(
    (f) => committedFiles.includes(f) && readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(committed, f), 'utf8'),
  );
  t.same(drifted, [], `no file differs; ${advice}`);
});

t.test('every spec has a compiled contract among the generated files', async (t) => {
  const files = listFiles(committed).map((f) => relative(committed, f));
  for (const { name } of INTERFACES) t.ok(files.includes(join(name, 'contract.gen.json')), `generated/${name}/contract.gen.json`);
});
