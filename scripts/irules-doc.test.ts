// docs/irules.md lists every command a rule may use exactly as the interpreter declares them.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { SUPPORTED_COMMANDS } from '../src/traffic/irules/index.ts';
import { IRULES_PAGE, withCommandsTable } from './irules-doc.ts';

t.test('docs/irules.md lists every supported command as the interpreter declares it', async (t) => {
  const page = readFileSync(IRULES_PAGE, 'utf8');
  t.equal(page, withCommandsTable(page), 'docs/irules.md is current; run `node scripts/irules-doc.ts --write`');
  for (const command of SUPPORTED_COMMANDS) t.match(page, `| \`${command.name}\` |`, `${command.name} has its row`);
});
