import type { ReadEntry } from 'tar';
import { checkEntryPath, quoteName } from './entry-path.ts';
import type { ExtractLimits } from './limits.ts';

const FILE_TYPES: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile']);
const REFUSED_TYPES: Readonly<Record<string, string>> = {
  SymbolicLink: 'is a symbolic link (links are not allowed)',
  Link: 'is a hard link (links are not allowed)',
  CharacterDevice: 'is a device (only files and directories are allowed)',
  BlockDevice: 'is a device (only files and directories are allowed)',
  FIFO: 'is a FIFO (only files and directories are allowed)',
};

/** What to do with one entry: write it, skip it (the archive root `./`), or refuse the whole archive. */
export type Admission = { kind: 'write' } | { kind: 'skip' } | { kind: 'refuse'; message: string };

/**
 * The entries of one archive as they stream by: counts them, adds up their sizes and remembers their
 * names, so that each entry is judged before a byte of it is written. Names are compared after
 * normalisation, case-folded and NFC-normalised, so `a`, `./a` and `A` are one name (they would be on
 * a case-insensitive file system).
 */
export class EntryTable {
  readonly files: string[] = [];
  unpackedBytes = 0;
  private entries = 0;
  private readonly fileKeys = new Set<string>();
  private readonly dirKeys = new Set<string>();
  private readonly listedDirKeys = new Set<string>();
  private readonly limits: ExtractLimits;

  constructor(limits: ExtractLimits) {
    this.limits = limits;
  }

  admit(entry: Pick<ReadEntry, 'path' | 'type' | 'size'>): Admission {
    const refuse = (message: string): Admission => ({ kind: 'refuse', message });
    const name = quoteName(entry.path);
    if (++this.entries > this.limits.maxEntries) return refuse(`the archive has more than ${this.limits.maxEntries} entries`);
    const refusedType = REFUSED_TYPES[entry.type];
    if (refusedType) return refuse(`entry ${name} ${refusedType}`);
    const isDirectory = entry.type === 'Directory';
    if (!isDirectory && !FILE_TYPES.has(entry.type)) return refuse(`entry ${name} has an unsupported type (${entry.type})`);

    const checked = checkEntryPath(entry.path, this.limits.maxDepth, this.limits.maxPathLength);
    if (!checked.ok) return refuse(`entry ${name} ${checked.reason}`);
    if (checked.path === '') return isDirectory ? { kind: 'skip' } : refuse(`entry ${name} has no file name`);

    const size = entry.size;
    if (isDirectory && size !== 0) return refuse(`directory entry ${name} carries ${size} bytes of data`);
    if (size > this.limits.maxEntryBytes)
      return refuse(`entry ${name} is ${size} bytes unpacked (at most ${this.limits.maxEntryBytes} per file)`);
    this.unpackedBytes += size;
    if (this.unpackedBytes > this.limits.maxUnpackedBytes)
      return refuse(`the archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes`);

    const keys = checked.parts.map((_, i) =>
      checked.parts
        .slice(0, i + 1)
        .join('/')
        .normalize('NFC')
        .toLowerCase(),
    );
    const key = keys.at(-1)!;
    for (const parent of keys.slice(0, -1)) {
      if (this.fileKeys.has(parent)) return refuse(`entry ${name} is inside ${quoteName(parent)}, which is a file`);
    }
    if (this.fileKeys.has(key) || this.listedDirKeys.has(key)) return refuse(`entry ${name} appears twice in the archive`);
    if (isDirectory) {
      if (key === 'manifest.json') return refuse('manifest.json is a directory, not a file');
      this.listedDirKeys.add(key);
    } else {
      if (this.dirKeys.has(key)) return refuse(`entry ${name} is a file, but other entries use it as a directory`);
      this.fileKeys.add(key);
      this.files.push(checked.path);
    }
    for (const dir of isDirectory ? keys : keys.slice(0, -1)) this.dirKeys.add(dir);
    return { kind: 'write' };
  }
}
