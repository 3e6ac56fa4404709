import { DECLARATIONS_FILE, type CollectionName } from './collections.ts';
import { declarationFacts } from './declaration-facts.ts';
import type { Fact } from './fact.ts';
import { scriptMeasures } from './script-measures.ts';
import type { SnapshotContent } from './content.ts';

const SCRIPT_FILE = /^config\/rules\/([^/~]+)~([^/]+)\.tcl$/;

export { collectionFields, COLLECTIONS, DECLARATIONS_FILE, isCollection, type CollectionName } from './collections.ts';

/** The collections of one snapshot, each derived on first use. */
export function factsOf(content: SnapshotContent): (name: CollectionName) => readonly Fact[] {
  let declaration: ReturnType<typeof declarationFacts> | undefined;
  let scripts: Fact[] | undefined;
  const device = content.collections;
  return (name) => {
    if (name === 'notes') return (content.notes ?? []).map((message) => ({ id: message, fields: { message } }));
    if (device) return device[name] ?? [];
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
    return [{ id: `/${partition}/${name}`, fields: { partition, name, file, ...scriptMeasures(content.text.get(file) ?? '') } }];
  });
}
