import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import { DEFAULT_EXTRACT_LIMITS, evaluateSnapshot, extractSnapshot, readSnapshotFolder, type ExtractLimits, type Manifest, type RuleSet } from './engine/index.ts';
import { snapshotStore as store, type ContentEntry, type DeviceFields, type SnapshotContents, type SnapshotRecord } from './snapshot-store.ts';

/** The uploaded archive and the unpacked snapshot inside a snapshot's folder `<data dir>/<id>/`. */
export const ARCHIVE_NAME = 'upload.tgz';
export const FILES_FOLDER = 'files';
export const snapshotFolder = (dataDir: string, id: string) => join(dataDir, id);

const COMMAND_FILE = /^commands\/([^/]+)\.txt$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The listing of a snapshot's content, from the paths of its files: every file `{id, value: path}`
 * (id: the first 32 hex digits of the path's SHA-256), and every command output `commands/<name>.txt`
 * as `{id, value: <name>}` (id: the first 12 hex digits). The archive format names a command's file
 * after the command (README.md: `commands/df.txt` holds what `df -P` printed), so the name is the
 * command line shown. Ids are looked up in this listing, never joined into a path.
 *
 * @example contentsOf(['manifest.json', 'commands/df.txt']).commands // [{ id: '...', value: 'df' }]
 */
export function contentsOf(paths: readonly string[]): SnapshotContents {
  const sorted = [...paths].sort();
  const files: ContentEntry[] = sorted.map((path) => ({ id: sha256(path).slice(0, 32), value: path }));
  const commands: ContentEntry[] = sorted.flatMap((path) => {
    const name = COMMAND_FILE.exec(path)?.[1];
    return name === undefined ? [] : [{ id: sha256(path).slice(0, 12), value: name }];
  });
  return { files, commands };
}

export const deviceOf = (manifest: Manifest): DeviceFields => ({
  hostname: manifest.hostname,
  chassisSerial: manifest.chassisSerial,
  platform: manifest.platform,
  version: manifest.version,
  generationDate: manifest.generatedAt,
});

export type SnapshotProcessorOptions = {
  db: Database;
  dataDir: string;
  logger: Logger;
  /** The rule set in force (loaded at start). */
  ruleSet: () => RuleSet;
  extractLimits?: ExtractLimits;
};

/**
 * Removes a snapshot's folder; a failure is logged, not thrown (the row is gone or failed already,
 * and whoever still writes there removes the folder when it notices).
 */
export async function removeSnapshotFolder(dataDir: string, id: string, logger: Logger): Promise<void> {
  try {
    await rm(snapshotFolder(dataDir, id), { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    logger.warn({ snapshotId: id, error: (error as Error).message }, 'removing a snapshot folder failed');
  }
}

/**
 * The work of one processing job (the job port runs it, at least once): a PROCESSING snapshot is
 * unpacked into `<folder>/files`, read and evaluated, and ends COMPLETE with its device fields,
 * diagnostics (`all`) and content listing, or ERROR with the engine's message. A COMPLETE snapshot
 * whose diagnostics come from another rule set version is evaluated again from its folder.
 *
 * Files: on COMPLETE the uploaded archive is removed (the unpacked folder is all that is read later:
 * by re-evaluations and the files and commands of the record); on ERROR the whole folder is removed
 * (nothing of a failed snapshot is served). A snapshot deleted while it was processed is noticed after
 * unpacking and when its outcome is stored: its folder is removed then, so nothing is left behind.
 */
export function createSnapshotProcessor(options: SnapshotProcessorOptions) {
  const { db, dataDir, logger } = options;
  const limits = options.extractLimits ?? DEFAULT_EXTRACT_LIMITS;
  const folderOf = (id: string) => snapshotFolder(dataDir, id);

  const removeFolder = (id: string) => removeSnapshotFolder(dataDir, id, logger);

  /** Removes the folder of a snapshot that was deleted while this job ran; true when that is so. */
  const goneMeanwhile = async (id: string): Promise<boolean> => {
    if (await store.getById(db, id)) return false;
    await removeFolder(id);
    logger.info({ snapshotId: id }, 'snapshot deleted while it was processed; its files are removed');
    return true;
  };

  const failWith = async (id: string, message: string, device?: DeviceFields): Promise<void> => {
    if (await store.fail(db, id, [message], device)) {
      await removeFolder(id);
      logger.info({ snapshotId: id, reason: message }, 'snapshot processing failed');
    } else await goneMeanwhile(id);
  };

  async function processUpload(record: SnapshotRecord, signal: AbortSignal): Promise<void> {
    const { id } = record;
    const ruleSet = options.ruleSet();
    const files = join(folderOf(id), FILES_FOLDER);
    // What an interrupted run of this job unpacked (the engine needs an empty destination).
    await rm(files, { recursive: true, force: true });
    const extracted = await extractSnapshot(join(folderOf(id), ARCHIVE_NAME), files, limits);
    signal.throwIfAborted();
    if (await goneMeanwhile(id)) return;
    if (!extracted.ok) return failWith(id, extracted.message);
    const device = deviceOf(extracted.manifest);
    const read = await readSnapshotFolder(files, ruleSet.reads);
    if (!read.ok) return failWith(id, read.message, device);
    const output = evaluateSnapshot(ruleSet, read.content);
    signal.throwIfAborted();
    if (!(await store.complete(db, id, device, output, contentsOf(extracted.files)))) {
      await goneMeanwhile(id);
      return;
    }
    await rm(join(folderOf(id), ARCHIVE_NAME), { force: true });
    logger.info({ snapshotId: id, hits: output.diagnostics.hit_count, rulesVersion: output.version }, 'snapshot processed');
  }

  async function reevaluate(record: SnapshotRecord): Promise<void> {
    const ruleSet = options.ruleSet();
    const read = await readSnapshotFolder(join(folderOf(record.id), FILES_FOLDER), ruleSet.reads);
    if (!read.ok) {
      // The stored diagnostics stay (of their own version); the next start tries again.
      logger.warn({ snapshotId: record.id, reason: read.message }, 'a processed snapshot could not be evaluated again');
      return;
    }
    if (await store.refresh(db, record.id, evaluateSnapshot(ruleSet, read.content))) {
      logger.info({ snapshotId: record.id, from: record.rulesVersion, to: ruleSet.version }, 'snapshot evaluated again with a new rule set');
    }
  }

  return {
    /** Runs the job of snapshot `id`; throws only for what is worth another attempt (a store failure, a bug). */
    async run(id: string, signal: AbortSignal): Promise<void> {
      const record = await store.getById(db, id);
      if (!record) {
        await removeFolder(id); // deleted before its job ran
        return;
      }
      if (record.status === 'PROCESSING') return processUpload(record, signal);
      if (record.status === 'COMPLETE' && record.rulesVersion !== options.ruleSet().version) return reevaluate(record);
    },
    /** Ends a snapshot whose job was given up (its attempts spent) ERROR with the reason; safe to repeat. */
    async giveUp(id: string, reason: string): Promise<void> {
      const record = await store.getById(db, id);
      if (record?.status === 'PROCESSING') await failWith(id, `The snapshot could not be processed: ${reason}`);
      else if (record) logger.warn({ snapshotId: id, reason }, 'evaluating a snapshot again was given up');
    },
  };
}

export type SnapshotProcessor = ReturnType<typeof createSnapshotProcessor>;
