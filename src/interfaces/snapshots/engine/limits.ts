/** How much a snapshot archive may hold. Every extraction is bounded by these, whatever the archive says. */
export type ExtractLimits = {
  /** Entries of the tar stream (files and directories). */
  readonly maxEntries: number;
  /** Bytes of all files together, unpacked. */
  readonly maxUnpackedBytes: number;
  /** Bytes of one file, unpacked. */
  readonly maxEntryBytes: number;
  /** Path components of one entry (`config/rules/a.tcl` is 3). */
  readonly maxDepth: number;
  /** Characters of one entry's path. */
  readonly maxPathLength: number;
  /** Bytes of `manifest.json`. */
  readonly maxManifestBytes: number;
  /**
   * Bytes of the decompressed tar stream read at most: the files plus their headers and padding. What
   * the entries' headers do not count (oversized or repeated extended headers, data after a missing end
   * marker) still stops here. Decompression ends earlier at the tar end marker.
   */
  readonly maxInflatedBytes: number;
};

const MiB = 1024 * 1024;

/**
 * The room a tar stream needs for files of `maxUnpackedBytes` in `maxEntries` entries: the files, plus
 * headers and padding (at most 4 KiB an entry: a header, a pax header and its body, the last block's
 * padding) plus 1 MiB for the end-of-archive records.
 */
export const maxTarBytes = (limits: Pick<ExtractLimits, 'maxUnpackedBytes' | 'maxEntries'>) =>
  limits.maxUnpackedBytes + limits.maxEntries * 4096 + MiB;

const FILE_LIMITS = {
  maxEntries: 10_000,
  maxUnpackedBytes: 512 * MiB,
  maxEntryBytes: 256 * MiB,
  maxDepth: 16,
  maxPathLength: 1024,
  maxManifestBytes: 64 * 1024,
};

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = Object.freeze({ ...FILE_LIMITS, maxInflatedBytes: maxTarBytes(FILE_LIMITS) });

/**
 * The defaults with `overrides` on top, each a positive safe integer. Without its own override,
 * `maxInflatedBytes` follows the file limits (maxTarBytes). Bugs (a wrong override) throw.
 *
 * @example extractLimits({ maxUnpackedBytes: 2 * 1024 ** 3, maxInflatedBytes: 2 * 1024 ** 3 }) // one budget of decompressed bytes
 */
export function extractLimits(overrides: Partial<ExtractLimits> = {}): ExtractLimits {
  const files = { ...FILE_LIMITS, ...overrides };
  const limits = { ...files, maxInflatedBytes: overrides.maxInflatedBytes ?? maxTarBytes(files) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`extract limit ${name} must be a positive integer, not ${value}`);
  }
  return Object.freeze(limits);
}

/**
 * The limits for one budget of decompressed bytes per snapshot (the setting
 * PORTOLAN_SNAPSHOT_MAX_INFLATED_BYTES): the tar stream, and so the files in it, stay within it.
 *
 * @example inflatedBudgetLimits(2 * 1024 ** 3).maxInflatedBytes // 2147483648
 */
export const inflatedBudgetLimits = (bytes: number): ExtractLimits => extractLimits({ maxUnpackedBytes: bytes, maxInflatedBytes: bytes });
