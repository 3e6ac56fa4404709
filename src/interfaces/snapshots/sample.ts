import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DiagnosticOutput } from '../../../generated/snapshots/types.gen.ts';
import { evaluateSnapshot, readSnapshotFolder, type RuleSet } from './engine/index.ts';
import { contentsOf, deviceOf } from './processing.ts';
import type { SnapshotContents, SnapshotRecord } from './snapshot-store.ts';
import { KEPT_MS } from './snapshot-wire.ts';

/** Snapshot `0`: shared by every account, read-only (the spec's "Sample snapshot `0`"). */
export const SAMPLE_ID = '0';
export const SAMPLE_ACCOUNT = '*';
/**
 * The sample, kept unpacked in the repository: a shop's device with known problems (an empty pool, a
 * single-member pool, plain HTTP on port 80, a monitor whose interval is not below its timeout, a
 * deprecated script command, access logging at debug, /var at 94 %, a licence ending in two weeks, a core
 * file, over a year of uptime), so its diagnostics hit rules of every importance and miss the rest.
 */
export const SAMPLE_DIR = fileURLToPath(new URL('./sample/', import.meta.url));

const DAY_MS = 24 * 3600 * 1000;

/**
 * When the sample expires, read at `nowMs`: it is never deleted, so its expiration date is always ahead,
 * as any snapshot's is a year after its upload: the end of the day (UTC) a year from now. The same
 * all day long, so two reads of one day agree.
 *
 * @example sampleExpiresAtMs(Date.parse('2030-05-01T10:00:00Z')); // Date.parse('2031-05-02T00:00:00Z')
 */
export const sampleExpiresAtMs = (nowMs: number): number => Math.floor((nowMs + KEPT_MS) / DAY_MS) * DAY_MS + DAY_MS;

export type Sample = {
  record: SnapshotRecord;
  /** Its diagnostics (`all`) under the rule set in force. */
  output: DiagnosticOutput;
  contents: SnapshotContents;
  /** Where its files are read from (the unpacked snapshot itself). */
  filesDir: string;
};

/**
 * Reads and evaluates the sample snapshot with `ruleSet` (at start, and so again whenever the rule set
 * changes); its record is dated by its manifest, so it is the same on every start.
 *
 * @example const sample = await loadSample(ruleSet); sample.output.diagnostics.hit_count
 */
export async function loadSample(ruleSet: RuleSet, dir: string = SAMPLE_DIR): Promise<Sample> {
  const read = await readSnapshotFolder(dir, ruleSet.reads);
  if (!read.ok) throw new Error(`The sample snapshot in ${dir} is not valid: ${read.message}`);
  const paths: string[] = [];
  let size = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    paths.push(relative(dir, path).split(sep).join('/'));
    size += (await lstat(path)).size;
  }
  const { manifest } = read.content;
  const record: SnapshotRecord = {
    id: SAMPLE_ID,
    account: SAMPLE_ACCOUNT,
    fileName: 'sample.snapshot',
    fileSize: size, // it was never uploaded: the size of its files

    description: 'Sample snapshot (shared, read-only)',
    supportCase: '',
    visibleInGui: true,
    status: 'COMPLETE',
    messages: [],
    ...deviceOf(manifest),
    uploadedBy: 'Portolan',
    uploadedAtMs: Date.parse(manifest.generatedAt),
    rulesVersion: ruleSet.version,
  };
  return { record, output: evaluateSnapshot(ruleSet, read.content), contents: contentsOf(paths), filesDir: dir };
}
