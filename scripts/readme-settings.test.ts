import { readFileSync } from 'node:fs';
import t from 'tap';
import { README, withSettingsTable } from './readme-settings.ts';

t.test('the README lists every setting as src/lib/config.ts defines it', async (t) => {
  const readme = readFileSync(README, 'utf8');
  t.equal(readme, withSettingsTable(readme), 'README.md is current; run `node scripts/readme-settings.ts --write`');
});
