import { readdirSync, readFileSync } from 'node:fs';

/**
 * Declarations shaped like the real extension's published examples (written afresh for the tests, in
 * fixtures/examples/): HTTPS with TLS objects, a shared Common tenant, iRule and WAF policy references,
 * constants at every level, address discovery, members added later, custom monitors, L4 services,
 * endpoint policies, profiles, long names, the AS3 wrapper's own options.
 */
const DIR = new URL('./fixtures/examples/', import.meta.url);
export const EXAMPLES: readonly [name: string, body: Record<string, unknown>][] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(new URL(f, DIR), 'utf8'))]);
