// Lints the specs: `npm run lint:specs [-- specs/a.yaml ...]` (every OpenAPI document of specs/ by default).
// Exits non-zero on any error or warning, listing every finding (swagger-parser, Spectral, examples, the
// origin rule: an element the seed table of specs/README.md does not reach must carry x-origin: designed;
// and, across the specs, the catalog: each file name usable as an interface name, each info.x-interface one
// capital letter used by no other spec).
import { readSpecCatalog } from '../src/lib/spec-catalog.ts';
import { lintSpec } from './spec-lint/lint.ts';
import { formatFinding } from './spec-lint/findings.ts';

const catalog = readSpecCatalog();
const files = process.argv.length > 2 ? process.argv.slice(2) : catalog.entries.map((e) => e.path);
let problems = catalog.problems.length;
for (const line of catalog.problems) console.log(`${line} (error catalog)`);
for (const file of files) {
  const findings = await lintSpec(file);
  problems += findings.length;
  for (const f of findings) console.log(formatFinding(f));
  if (findings.length === 0) console.log(`${file}: ok`);
}
console.log(problems === 0 ? 'specs: no problems' : `specs: ${problems} problem(s)`);
process.exitCode = problems === 0 ? 0 : 1;
