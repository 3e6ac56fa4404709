import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * How an unpacked archive is laid out: a Portolan snapshot (`manifest.json` at its root), or a device's
 * own archive, a UCS or a qkview (`config/bigip.conf` or `config/bigip_base.conf` at its root or in one
 * top-level folder: `root` is '' or that folder with a trailing `/`).
 */
export type SnapshotLayout = { kind: 'portolan' } | { kind: 'device'; root: string };

/** The configuration files whose presence makes a device archive. */
export const DEVICE_MARKERS = ['config/bigip.conf', 'config/bigip_base.conf'] as const;

const isFile = async (path: string) => (await lstat(path).catch(() => undefined))?.isFile() === true;

/**
 * Which layout the folder `dir` holds. `manifest.json` at the root wins (even a broken one: its reader
 * says what is wrong); a folder with neither answers `portolan`, whose reader reports the missing manifest.
 *
 * @example await snapshotLayout('/data/snapshots/7/files') // { kind: 'device', root: '' }
 */
export async function snapshotLayout(dir: string): Promise<SnapshotLayout> {
  if ((await lstat(join(dir, 'manifest.json')).catch(() => undefined)) !== undefined) return { kind: 'portolan' };
  const tops = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`);
  for (const root of ['', ...tops.sort()]) {
    for (const marker of DEVICE_MARKERS) if (await isFile(join(dir, root, marker))) return { kind: 'device', root };
  }
  return { kind: 'portolan' };
}
