import { createHash } from 'node:crypto';
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ok, type PortolanError, type Result } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits, type Manifest, type RuleSet } from './engine/index.ts';
import { createWorkerRunner, WorkerCrash, type ProcessingRunner } from './processing-runner.ts';
import type { ProcessingReply, ProcessingTask } from './processing-task.ts';
import {
  snapshotStore as store,
  type ContentEntry,
  type DeviceFields,
  type SnapshotContents,
  type SnapshotRecord,
} from './snapshot-store.ts';

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
  /** The time budget and the checks for a snapshot deleted by another process run on these. */
  timers: Timers;
  /** PORTOLAN_SNAPSHOT_TIME_BUDGET_MS: how long one task of a snapshot may run (default DEFAULT_TIME_BUDGET_MS). */
  timeBudgetMs?: number;
  /** Where the engine's work runs (default: a worker thread per task, createWorkerRunner). */
  runner?: ProcessingRunner;
  /** The account quota's check of unpacked files (account-quota.ts); without it every snapshot fits. */
  quota?: UnpackedQuota;
};

/**
 * Whether a processed snapshot's unpacked files fit in its account's quota, decided in `tx` (which the
 * outcome is then written in): AccountQuota.admitUnpacked.
 */
export type UnpackedQuota = {
  admitUnpacked(tx: Database, args: { account: string; id: string; bytes: number }): Promise<Result<void, PortolanError>>;
};

const EVERY_SNAPSHOT_FITS: UnpackedQuota = { admitUnpacked: async () => ok(undefined) };
/** The quota check takes its account's lock row first (upload-store.ts), so read-committed is enough. */
const UNDER_ACCOUNT_LOCK = { isolation: 'read-committed' } as const;

export const DEFAULT_TIME_BUDGET_MS = 60_000;
/** How often a running task checks that its snapshot still exists: a delete in another process stops it within this. */
export const DELETION_CHECK_MS = 1000;

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

/** Bytes of the regular files under `dir` (links are not followed); 0 when it does not exist. */
export async function folderBytes(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    total += await lstat(join(entry.parentPath, entry.name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

type InFlight = { cancel: AbortController; ended: Promise<unknown> };

/**
 * The work of one processing job (the job port runs it, at least once): a PROCESSING snapshot is
 * unpacked into `<folder>/files`, read and evaluated, and ends COMPLETE with its device fields,
 * diagnostics (`all`) and content listing, or ERROR with the engine's message. A COMPLETE snapshot
 * whose diagnostics come from another rule set version is evaluated again from its folder.
 *
 * The engine's work runs off the event loop (the runner: a worker thread per task), within the extract
 * limits and a time budget: past either the snapshot ends ERROR with the reason. A task stops at once
 * when its snapshot is deleted (cancel(), or noticed within DELETION_CHECK_MS when another process
 * deleted it) or its job is stopped (the job's signal: a stop, a lost lease); a thread that crashes is
 * an error the job port tries again, and gives up (ERROR) after its attempts.
 *
 * Quota: the unpacked files are measured before the outcome is written, and the account's quota check and
 * the outcome (COMPLETE with the size, or ERROR when they do not fit) are one transaction: a reader sees
 * PROCESSING, then the final state, never COMPLETE for a snapshot that ends ERROR.
 *
 * Files: on COMPLETE the uploaded archive is removed (the unpacked folder is all that is read later:
 * by re-evaluations and the files and commands of the record); on ERROR the whole folder is removed
 * (nothing of a failed snapshot is served). A snapshot deleted while it was processed is noticed after
 * the task and when its outcome is stored: its folder is removed then, so nothing is left behind.
 */
export function createSnapshotProcessor(options: SnapshotProcessorOptions) {
  const { db, dataDir, logger, timers } = options;
  const limits = options.extractLimits ?? DEFAULT_EXTRACT_LIMITS;
  const runner = options.runner ?? createWorkerRunner({ timers, timeBudgetMs: options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS });
  const quota = options.quota ?? EVERY_SNAPSHOT_FITS;
  const folderOf = (id: string) => snapshotFolder(dataDir, id);
  const inFlight = new Map<string, Set<InFlight>>();

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

  /** Aborts `cancel` once snapshot `id` is gone from the store (deleted by any process); the returned function stops looking. */
  const watchDeletion = (id: string, cancel: AbortController): (() => void) => {
    let stopped = false;
    let next = timers.after(DELETION_CHECK_MS, () => void check(), { background: true });
    async function check(): Promise<void> {
      try {
        if (!stopped && !(await store.getById(db, id))) return void cancel.abort(new Error('The snapshot was deleted.'));
      } catch (error) {
        logger.warn({ snapshotId: id, error: (error as Error).message }, 'checking that a snapshot still exists failed; looking again');
      }
      if (!stopped) next = timers.after(DELETION_CHECK_MS, () => void check(), { background: true });
    }
    return () => {
      stopped = true;
      next();
    };
  };

  /** Runs one task of snapshot `id`: its reply, or undefined when the snapshot was deleted meanwhile (the task was stopped). */
  async function runTask(id: string, task: ProcessingTask, signal: AbortSignal): Promise<ProcessingReply | undefined> {
    const cancel = new AbortController();
    const stopWatching = watchDeletion(id, cancel);
    const running = runner(task, AbortSignal.any([signal, cancel.signal]));
    const entry: InFlight = { cancel, ended: running.catch(() => undefined) };
    const entries = inFlight.get(id) ?? new Set<InFlight>();
    inFlight.set(id, entries.add(entry));
    try {
      return await running;
    } catch (error) {
      if (cancel.signal.aborted) return undefined;
      if (error instanceof WorkerCrash)
        logger.warn(
          { snapshotId: id, error: error.message, cause: (error.cause as Error | undefined)?.message },
          'a snapshot processing thread crashed',
        );
      throw error; // a crash, or the job stopped (its signal): the job port decides whether to try again
    } finally {
      stopWatching();
      entries.delete(entry);
      if (entries.size === 0) inFlight.delete(id);
    }
  }

  async function processUpload(record: SnapshotRecord, signal: AbortSignal): Promise<void> {
    const { id } = record;
    const ruleSet = options.ruleSet();
    const files = join(folderOf(id), FILES_FOLDER);
    // What an interrupted run of this job unpacked (the engine needs an empty destination).
    await rm(files, { recursive: true, force: true });
    const reply = await runTask(
      id,
      { kind: 'unpack', archivePath: join(folderOf(id), ARCHIVE_NAME), filesDir: files, limits, rules: ruleSet.source },
      signal,
    );
    if (!reply) {
      await removeFolder(id);
      logger.info({ snapshotId: id }, 'snapshot deleted while it was processed; its processing is stopped and its files are removed');
      return;
    }
    signal.throwIfAborted();
    if (await goneMeanwhile(id)) return;
    if (!reply.ok) return failWith(id, reply.message, reply.manifest && deviceOf(reply.manifest));
    const device = deviceOf(reply.manifest);
    const bytes = await folderBytes(files);
    const outcome = await db.transaction(async (tx) => {
      const fits = await quota.admitUnpacked(tx, { account: record.account, id, bytes });
      if (!fits.ok) return (await store.fail(tx, id, [fits.error.message], device)) ? 'over-quota' : 'gone';
      return (await store.complete(tx, id, device, reply.output, contentsOf(reply.files), bytes)) ? 'complete' : 'gone';
    }, UNDER_ACCOUNT_LOCK);
    if (outcome === 'gone') {
      await goneMeanwhile(id);
      return;
    }
    if (outcome !== 'complete') {
      await removeFolder(id);
      logger.info({ snapshotId: id, bytes }, 'a processed snapshot did not fit in its account quota; it ends ERROR');
      return;
    }
    await rm(join(folderOf(id), ARCHIVE_NAME), { force: true });
    logger.info({ snapshotId: id, hits: reply.output.diagnostics.hit_count, rulesVersion: reply.output.version }, 'snapshot processed');
  }

  async function reevaluate(record: SnapshotRecord, signal: AbortSignal): Promise<void> {
    const ruleSet = options.ruleSet();
    const reply = await runTask(
      record.id,
      { kind: 'evaluate', filesDir: join(folderOf(record.id), FILES_FOLDER), rules: ruleSet.source },
      signal,
    );
    if (!reply) return; // deleted meanwhile: the delete removes its folder
    if (!reply.ok) {
      // The stored diagnostics stay (of their own version); the next start tries again.
      logger.warn({ snapshotId: record.id, reason: reply.message }, 'a processed snapshot could not be evaluated again');
      return;
    }
    if (await store.refresh(db, record.id, reply.output)) {
      logger.info(
        { snapshotId: record.id, from: record.rulesVersion, to: ruleSet.version },
        'snapshot evaluated again with a new rule set',
      );
    }
  }

  return {
    /** Runs the job of snapshot `id`; throws only for what is worth another attempt (a store failure, a crashed thread, a bug). */
    async run(id: string, signal: AbortSignal): Promise<void> {
      const record = await store.getById(db, id);
      if (!record) {
        await removeFolder(id); // deleted before its job ran
        return;
      }
      if (record.status === 'PROCESSING') return processUpload(record, signal);
      if (record.status === 'COMPLETE' && record.rulesVersion !== options.ruleSet().version) return reevaluate(record, signal);
    },
    /**
     * Stops the processing of snapshot `id` in this process, if any (call it once its row is deleted);
     * resolves once its thread has stopped, so that removing the folder afterwards leaves nothing behind.
     */
    async cancel(id: string): Promise<void> {
      const entries = [...(inFlight.get(id) ?? [])];
      for (const entry of entries) entry.cancel.abort(new Error('The snapshot was deleted.'));
      await Promise.all(entries.map((entry) => entry.ended));
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
