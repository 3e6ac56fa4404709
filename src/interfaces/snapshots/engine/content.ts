import type { CollectionName } from './collections.ts';
import type { Fact } from './fact.ts';
import type { Manifest } from './manifest.ts';

/** What the evaluator sees of a snapshot: its manifest, the names of all its files and the text of those the rules read. */
export type SnapshotContent = {
  readonly manifest: Manifest;
  /** Every file of the snapshot: relative POSIX paths, sorted. */
  readonly paths: readonly string[];
  /** The text (UTF-8) of the files the rule set reads, each cut at `maxFileBytes`. */
  readonly text: ReadonlyMap<string, string>;
  /** Files the rule set would read that were left out because the read budget was spent. */
  readonly unread: readonly string[];
  /**
   * A device archive's collections, read from its configuration (tmsh/config-facts.ts); absent for a
   * Portolan snapshot, whose collections come from its declaration and script files (facts.ts).
   */
  readonly collections?: Readonly<Partial<Record<CollectionName, readonly Fact[]>>>;
  /** How output lines name a file that stands for an object of the configuration (a device archive's `ltm rule`). */
  readonly labels?: ReadonlyMap<string, string>;
  /** What could not be read, or was read from elsewhere (a device archive without VERSION): shown by the rule `snapshot-read-partly`. */
  readonly notes?: readonly string[];
};

export type ReadLimits = { readonly maxFileBytes: number; readonly maxTotalBytes: number; readonly maxManifestBytes: number };
export const DEFAULT_READ_LIMITS: ReadLimits = Object.freeze({
  maxFileBytes: 4 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxManifestBytes: 64 * 1024,
});
