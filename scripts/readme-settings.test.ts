// docs/settings.md lists every setting exactly as the settings are declared (src/app/config.ts).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { SETTINGS } from '../src/app/config.ts';
import { SETTINGS_PAGE, withSettingsTable } from './readme-settings.ts';

t.test('docs/settings.md lists every setting as the code declares it', async (t) => {
  const page = readFileSync(SETTINGS_PAGE, 'utf8');
  t.equal(page, withSettingsTable(page), 'docs/settings.md is current; run `node scripts/readme-settings.ts --write`');
  for (const setting of SETTINGS) t.match(page, `| \`${setting.env}\` | \`${setting.key}\` |`, `${setting.env} has its row`);
});
