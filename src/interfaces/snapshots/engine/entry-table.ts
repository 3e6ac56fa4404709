import type { ReadEntry } from 'tar';
import { checkEntryPath, quoteName } from './entry-path.ts';
import type { ExtractLimits } from './limits.ts';

const FILE_TYPES: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile']);
// Links are left out, never written nor followed: a real device's archive carries some (certificate hash
// links under config/ssl), so refusing them would refuse every such archive; leaving them out is as safe.
const LINK_TYPES: ReadonlySet<string> = new Set(['SymbolicLink', 'Link']);
/** Names of left-out links kept for the note (the count is always exact). */
const LINK_NAMES_KEPT = 5;
const REFUSED_TYPES: Readonly<Record<string, string>> = {
  CharacterDevice: 'is a device (only files and directories are allowed)',
  BlockDevice: 'is a device (only files and directories are allowed)',
  FIFO: 'is a FIFO (only files and directories are allowed)',
};

/** What to do with one entry: write it, skip it (the archive root `./`, a link), or refuse the whole archive. */
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
  /** Links left out (never written nor followed): how many, and the first few names. */
  readonly skippedLinks: { count: number; names: string[] } = { count: 0, names: [] };
  /** Entries skipped as repeats of one already admitted (repeatOf). */
  repeatedEntries = 0;
  private entries = 0;
  private readonly fileKeys = new Set<string>();
  private readonly dirKeys = new Set<string>();
  private readonly listedDirKeys = new Set<string>();
  /** The exact name and size each key was first admitted with: a repeat of the very same entry is skipped. */
  private readonly firstSeen = new Map<string, { path: string; size: number }>();
  private readonly limits: ExtractLimits;

  constructor(limits: ExtractLimits) {
    this.limits = limits;
  }

  admit(entry: Pick<ReadEntry, 'path' | 'type' | 'size'>): Admission {
    const refuse = (message: string): Admission => ({ kind: 'refuse', message });
    const name = quoteName(entry.path);
    if (++this.entries > this.limits.maxEntries) return refuse(`the archive has more than ${this.limits.maxEntries} entries`);
    if (LINK_TYPES.has(entry.type)) {
      if (this.skippedLinks.names.length < LINK_NAMES_KEPT) this.skippedLinks.names.push(entry.path);
      this.skippedLinks.count++;
      return { kind: 'skip' };
    }
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
    const repeat = this.repeatOf(key, checked.path, isDirectory, size);
    if (repeat !== undefined) return repeat;
    if (this.fileKeys.has(key) || this.listedDirKeys.has(key)) return refuse(`entry ${name} appears twice in the archive`);
    this.firstSeen.set(key, { path: checked.path, size });
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

  /**
   * The same entry listed again (node-tar's `create` given a folder and the files in it lists them
   * twice; GNU tar lists a folder again with `--append`): the same directory, or a file of the very same
   * name and size, is skipped (the first copy stays; it was judged and counted once). Any other clash
   * (another size, a name differing in case or normalisation, a file and a directory) is left to the
   * caller, which refuses it.
   */
  private repeatOf(key: string, path: string, isDirectory: boolean, size: number): Admission | undefined {
    const first = this.firstSeen.get(key);
    if (first === undefined || first.path !== path) return undefined;
    if (isDirectory ? this.listedDirKeys.has(key) : this.fileKeys.has(key) && first.size === size) {
      this.unpackedBytes -= size;
      this.repeatedEntries++;
      return { kind: 'skip' };
    }
    return undefined;
  }
}
