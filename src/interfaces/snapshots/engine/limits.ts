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
};

const MiB = 1024 * 1024;

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = Object.freeze({
  maxEntries: 10_000,
  maxUnpackedBytes: 512 * MiB,
  maxEntryBytes: 256 * MiB,
  maxDepth: 16,
  maxPathLength: 1024,
  maxManifestBytes: 64 * 1024,
});

/**
 * The bound on the decompressed tar stream itself: the files, plus headers and padding (at most
 * 4 KiB an entry: a header, a pax header and its body, the last block's padding) plus 1 MiB for the
 * end-of-archive records. Whatever a gzip member inflates to beyond this is refused.
 */
export const maxTarBytes = (limits: ExtractLimits) => limits.maxUnpackedBytes + limits.maxEntries * 4096 + MiB;

/** The defaults with `overrides` on top, each a positive safe integer. Bugs (a wrong override) throw. */
export function extractLimits(overrides: Partial<ExtractLimits> = {}): ExtractLimits {
  const limits = { ...DEFAULT_EXTRACT_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`extract limit ${name} must be a positive integer, not ${value}`);
  }
  return Object.freeze(limits);
}
