// specs/releases.yaml: per spec, the commit its current major version was released at (the "release
// floor"). The versioning test compares each spec in the working tree with the spec at its floor.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { isObject } from '../lib/contract/json-pointer.ts';

export type ReleaseFloor = { version: string; commit: string };

/** The floors by spec name; throws one line naming the file and the entry when it is malformed. */
export function readReleaseFloors(path: string): Map<string, ReleaseFloor> {
  const doc = parse(readFileSync(path, 'utf8')) as unknown;
  const specs = isObject(doc) ? doc.specs : undefined;
  if (!isObject(specs)) throw new Error(`${path}: expected a 'specs' map of <spec name>: {version, commit}`);
  const floors = new Map<string, ReleaseFloor>();
  for (const [name, entry] of Object.entries(specs)) {
    const commit = isObject(entry) ? entry.commit : undefined;
    const version = isObject(entry) ? entry.version : undefined;
    if (typeof commit !== 'string' || !/^[0-9a-f]{40}$/.test(commit) || typeof version !== 'string') {
      throw new Error(`${path}: specs.${name} needs version (the released info.version) and commit (40 hex digits)`);
    }
    floors.set(name, { version, commit });
  }
  return floors;
}
