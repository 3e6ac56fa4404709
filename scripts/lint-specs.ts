// Lints the specs: `npm run lint:specs [-- specs/a.yaml ...]` (all of them by default).
// Exits non-zero on any error or warning, listing every finding (swagger-parser, Spectral, examples, and the
// origin rule: an element the seed table of specs/README.md does not reach must carry x-origin: designed).
import { INTERFACES, specPath } from '../src/lib/spec-catalog.ts';
import { lintSpec } from './spec-lint/lint.ts';
import { formatFinding } from './spec-lint/findings.ts';

const files = process.argv.length > 2 ? process.argv.slice(2) : INTERFACES.map((i) => specPath(i.name));
let problems = 0;
for (const file of files) {
  const findings = await lintSpec(file);
  problems += findings.length;
  for (const f of findings) console.log(formatFinding(f));
  if (findings.length === 0) console.log(`${file}: ok`);
}
console.log(problems === 0 ? 'specs: no problems' : `specs: ${problems} problem(s)`);
process.exitCode = problems === 0 ? 0 : 1;
