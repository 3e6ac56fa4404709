// The healthy snapshot of fixtures/healthy-snapshot/ (every shipped rule misses on it) and small
// edits of it that make one rule hit or nearly hit: the material of rules.test.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Manifest } from './manifest.ts';
import { snapshotContent, type SnapshotContent } from './snapshot-content.ts';

export const HEALTHY_DIR = new URL('./fixtures/healthy-snapshot/', import.meta.url).pathname;

type Files = Record<string, string>;
type Json = Record<string, any>;
/** A change to the healthy snapshot: files added or replaced, files removed, manifest fields, or a function over the files. */
export type Patch = {
  files?: Files;
  remove?: readonly string[];
  manifest?: Partial<Manifest>;
  edit?: (files: Files) => void;
  /** What reading noted (as a device archive's reader does). */
  notes?: readonly string[];
};

export function healthyFiles(): Files {
  const files: Files = {};
  for (const entry of readdirSync(HEALTHY_DIR, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files[relative(HEALTHY_DIR, join(entry.parentPath, entry.name)).split(sep).join('/')] = readFileSync(
        join(entry.parentPath, entry.name),
        'utf8',
      );
  }
  return files;
}

/** The healthy snapshot with `patch` applied, as the evaluator sees it. */
export function patched(patch: Patch = {}): SnapshotContent {
  const files = { ...healthyFiles(), ...patch.files };
  for (const path of patch.remove ?? []) delete files[path];
  patch.edit?.(files);
  const manifest = { ...(JSON.parse(files['manifest.json']!) as Manifest), ...patch.manifest };
  return { ...snapshotContent(manifest, files), ...(patch.notes ? { notes: patch.notes } : {}) };
}

/** A patch that edits the declaration's application /Web_Prod/App_1 (or the whole declaration, `adc`). */
export const declaration = (change: (app: Json, adc: Json) => void): Patch => ({
  edit: (files) => {
    const adc = JSON.parse(files['config/declarations.json']!) as Json;
    change(adc.Web_Prod.App_1, adc);
    files['config/declarations.json'] = JSON.stringify(adc);
  },
});

/** A patch that replaces `from` with `to` in one file (which must contain it). */
export const replace = (path: string, from: string | RegExp, to: string): Patch => ({
  edit: (files) => {
    const before = files[path]!;
    files[path] = before.replace(from, to);
    if (files[path] === before) throw new Error(`${String(from)} not found in ${path}`);
  },
});

export const dbVariables = (values: Record<string, string>): Patch => ({
  edit: (files) => {
    files['config/db-variables.json'] = JSON.stringify({ ...JSON.parse(files['config/db-variables.json']!), ...values });
  },
});

export const script = (name: string, text: string): Patch => ({ files: { [`config/rules/Common~${name}.tcl`]: text } });

/** Patches applied one after the other. */
export const both = (...patches: Patch[]): Patch => ({
  files: Object.assign({}, ...patches.map((p) => p.files)),
  remove: patches.flatMap((p) => p.remove ?? []),
  manifest: Object.assign({}, ...patches.map((p) => p.manifest)),
  edit: (files) => {
    for (const p of patches) p.edit?.(files);
  },
});

export const lines = (count: number, line: (i: number) => string) => `${Array.from({ length: count }, (_, i) => line(i)).join('\n')}\n`;
