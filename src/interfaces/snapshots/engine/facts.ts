import { declarationFacts } from './declaration-facts.ts';
import type { Fact } from './fact.ts';
import type { SnapshotContent } from './snapshot-content.ts';

export const DECLARATIONS_FILE = 'config/declarations.json';
const SCRIPT_FILE = /^config\/rules\/([^/~]+)~([^/]+)\.tcl$/;

/** The collections rules can query with `each`, where each comes from, and its fields (README.md, "Collections"). */
export const COLLECTIONS = {
  tenants: { source: DECLARATIONS_FILE, fields: ['name', 'applicationCount'] },
  applications: { source: DECLARATIONS_FILE, fields: ['tenant', 'name', 'template', 'serviceCount', 'poolCount'] },
  services: {
    source: DECLARATIONS_FILE,
    fields: ['tenant', 'application', 'name', 'class', 'virtualAddresses', 'virtualPort', 'pool', 'poolFound', 'tls'],
  },
  pools: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'name', 'memberCount', 'monitorCount', 'monitors'] },
  members: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'pool', 'address', 'port'] },
  monitors: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'name', 'monitorType', 'interval', 'timeout'] },
  listeners: { source: DECLARATIONS_FILE, fields: ['address', 'port', 'serviceCount', 'services'] },
  scripts: { source: 'config/rules/*.tcl', fields: ['partition', 'name', 'file', 'bytes', 'lines', 'blank', 'text'] },
} as const;
export type CollectionName = keyof typeof COLLECTIONS;

export const isCollection = (name: string): name is CollectionName => Object.hasOwn(COLLECTIONS, name);
export const collectionFields = (name: CollectionName): readonly string[] => ['id', ...COLLECTIONS[name].fields];

/** The collections of one snapshot, each derived on first use. */
export function factsOf(content: SnapshotContent): (name: CollectionName) => readonly Fact[] {
  let declaration: ReturnType<typeof declarationFacts> | undefined;
  let scripts: Fact[] | undefined;
  return (name) => {
    if (name === 'scripts') return (scripts ??= scriptFacts(content));
    declaration ??= declarationFacts(content.text.get(DECLARATIONS_FILE));
    return declaration[name];
  };
}

/** Script objects, one file each: `config/rules/<partition>~<name>.tcl`. */
function scriptFacts(content: SnapshotContent): Fact[] {
  return content.paths.flatMap((file) => {
    const [, partition, name] = SCRIPT_FILE.exec(file) ?? [];
    if (!partition || !name) return [];
    const text = content.text.get(file) ?? '';
    const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
    const blank = lines.every((line) => /^\s*(#.*)?$/.test(line));
    return [
      { id: `/${partition}/${name}`, fields: { partition, name, file, bytes: Buffer.byteLength(text), lines: lines.length, blank, text } },
    ];
  });
}
