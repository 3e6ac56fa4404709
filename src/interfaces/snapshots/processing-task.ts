import type { DiagnosticOutput } from '../../../generated/snapshots/types.gen.ts';
import { evaluateSnapshot, extractSnapshot, parseRuleSet, readSnapshotFolder, type ExtractLimits, type Manifest } from './engine/index.ts';

/**
 * One unit of a snapshot's processing, as a processing worker thread receives it (plain data: it is
 * copied to the thread). `unpack`: an uploaded archive into `filesDir` (absent or empty), then read and
 * evaluate it; `evaluate`: an unpacked folder again, with another rule set. `rules` is the rule file as
 * decoded JSON (RuleSet.source): compiled rules do not cross threads, so the thread compiles them again.
 */
export type ProcessingTask =
  | { kind: 'unpack'; archivePath: string; filesDir: string; limits: ExtractLimits; rules: unknown }
  | { kind: 'evaluate'; filesDir: string; rules: unknown };

export type ProcessingPhase = 'unpacking' | 'reading' | 'evaluating';

/** The outcome: the manifest, the files written (archive order; none for `evaluate`) and the diagnostics (`all`), or why not. */
export type ProcessingReply =
  | { ok: true; manifest: Manifest; files: readonly string[]; output: DiagnosticOutput }
  | { ok: false; message: string; manifest?: Manifest };

/**
 * Does a processing task: the whole of the engine's work on one snapshot, with no database and no clock,
 * so that it can run on a thread of its own (processing-worker.ts). Hostile archives end in a reply with
 * the engine's message; only a bug throws.
 *
 * @example const reply = await runProcessingTask({ kind: 'evaluate', filesDir, rules: ruleSet.source });
 */
export async function runProcessingTask(
  task: ProcessingTask,
  onPhase: (phase: ProcessingPhase) => void = () => undefined,
): Promise<ProcessingReply> {
  const rules = parseRuleSet(task.rules);
  if (!rules.ok) throw new Error(`The rule set given to a processing task is invalid: ${rules.message}`);
  let files: readonly string[] = [];
  let unpackedManifest: Manifest | undefined;
  let linkNote: string | undefined;
  if (task.kind === 'unpack') {
    onPhase('unpacking');
    const extracted = await extractSnapshot(task.archivePath, task.filesDir, task.limits);
    if (!extracted.ok) return extracted;
    files = extracted.files;
    unpackedManifest = extracted.manifest;
    linkNote = linksNote(extracted.skippedLinks);
  }
  onPhase('reading');
  const read = await readSnapshotFolder(task.filesDir, rules.ruleSet.reads);
  if (!read.ok) return { ok: false, message: read.message, ...(unpackedManifest ? { manifest: unpackedManifest } : {}) };
  onPhase('evaluating');
  const content = linkNote === undefined ? read.content : { ...read.content, notes: [...(read.content.notes ?? []), linkNote] };
  return { ok: true, manifest: read.content.manifest, files, output: evaluateSnapshot(rules.ruleSet, content) };
}

/** The note for links the archive held and extraction left out (a device's archive has some), or none. */
function linksNote({ count, names }: { count: number; names: readonly string[] }): string | undefined {
  if (count === 0) return undefined;
  const shown = names.map((name) => JSON.stringify(name.slice(0, 200))).join(', ');
  return `${count} link${count === 1 ? ' was' : 's were'} left out of the archive, never followed: ${shown}${count > names.length ? ', ...' : ''}`;
}
