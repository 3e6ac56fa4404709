// The device archive of fixtures/device-archive/ (a UCS-like tree in a device's own layout, on which
// no configuration rule hits) and edits of it: the material of rules-device.test.ts.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import type { SnapshotContent } from './content.ts';
import type { RuleSet } from './rule-types.ts';
import { readSnapshotFolder } from './snapshot-content.ts';

export const DEVICE_DIR = new URL('./fixtures/device-archive/', import.meta.url).pathname;

type Files = Record<string, string>;
/** A change to the device archive: files added or replaced, files removed, text appended to files, or a function over the files. */
export type DevicePatch = { files?: Files; remove?: readonly string[]; append?: Files; edit?: (files: Files) => void };

export async function deviceFiles(dir = DEVICE_DIR): Promise<Files> {
  const files: Files = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files[relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/')] = await readFile(
        join(entry.parentPath, entry.name),
        'utf8',
      );
  }
  return files;
}

export async function writeFiles(dir: string, files: Files): Promise<void> {
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), body);
  }
}

/** The device archive with `patch` applied, as the evaluator sees it (written to a temporary folder and read back). */
export async function deviceContent(ruleSet: RuleSet, patch: DevicePatch = {}): Promise<SnapshotContent> {
  const files = { ...(await deviceFiles()), ...patch.files };
  for (const path of patch.remove ?? []) delete files[path];
  for (const [path, text] of Object.entries(patch.append ?? {})) files[path] = (files[path] ?? '') + text;
  patch.edit?.(files);
  const dir = await mkdtemp(join(tmpdir(), 'portolan-device-archive-'));
  try {
    await writeFiles(dir, files);
    const read = await readSnapshotFolder(dir, ruleSet.reads);
    if (!read.ok) throw new Error(read.message);
    return read.content;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A patch that replaces `from` with `to` in one file (which must contain it). */
export const change = (path: string, from: string | RegExp, to: string): DevicePatch => ({
  edit: (files) => {
    const before = files[path]!;
    files[path] = before.replace(from, to);
    if (files[path] === before) throw new Error(`${String(from)} not found in ${path}`);
  },
});

/** Objects added to the main configuration file. */
export const conf = (text: string): DevicePatch => ({ append: { 'config/bigip.conf': text } });
export const baseConf = (text: string): DevicePatch => ({ append: { 'config/bigip_base.conf': text } });
export const version = (v: string): DevicePatch => change('VERSION', 'Version: 16.1.4', `Version: ${v}`);
export const rule = (name: string, body: string): DevicePatch => conf(`ltm rule /Common/${name} {\n${body}\n}\n`);
export const db = (name: string, value: string): DevicePatch => baseConf(`sys db ${name} {\n    value "${value}"\n}\n`);

/** Patches applied one after the other. */
export const all = (...patches: DevicePatch[]): DevicePatch => ({
  edit: (files) => {
    for (const p of patches) {
      Object.assign(files, p.files);
      for (const path of p.remove ?? []) delete files[path];
      for (const [path, text] of Object.entries(p.append ?? {})) files[path] = (files[path] ?? '') + text;
      p.edit?.(files);
    }
  },
});
