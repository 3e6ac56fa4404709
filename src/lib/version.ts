// The version of the installed Portolan (`portolan --version`): the `version` of the package.json above this
// file, found from a checkout (src/cli/) and from the package (dist/src/cli/) alike.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The `version` of the nearest package.json named `portolan` above `from` (default: this file's folder).
 *
 * @example packageVersion() // '0.1.0'
 */
export function packageVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'portolan' && typeof manifest.version === 'string') return manifest.version;
    }
    if (dirname(dir) === dir) throw new Error(`No package.json of portolan above ${from}.`);
  }
}
