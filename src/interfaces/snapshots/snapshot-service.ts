import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { DiagnosticOutput } from '../../../generated/snapshots/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { createJobQueue, createJobWorker, type JobWorker } from '../../stores/job-queue.ts';
import { DEFAULT_RULES_PATH, loadRuleSetFile, type ExtractLimits, type RuleSet } from './engine/index.ts';
import { createAccountQuota, DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from './account-quota.ts';
import { createSnapshotProcessor, FILES_FOLDER, removeSnapshotFolder, snapshotFolder } from './processing.ts';
import type { ProcessingRunner } from './processing-runner.ts';
import { loadSample, SAMPLE_ID, type Sample } from './sample.ts';
import { DEFAULT_SNAPSHOT_MAX_ATTEMPTS } from './settings.ts';
import {
  jobIdPrefix,
  PROCESSING_QUEUE,
  snapshotStore as store,
  type ContentEntry,
  type MetadataPatch,
  type SnapshotContents,
  type SnapshotRecord,
} from './snapshot-store.ts';
import { createSnapshotIntake, type UploadBody, type UploadOutcome } from './snapshot-intake.ts';
import { processLiveness, thisMachine, type OwnerLiveness, type UploadOwner } from './upload-owner.ts';
import { createUploadSweeper } from './upload-sweep.ts';
import type { OpenFile } from './upload.ts';

export type { ContentEntry, SnapshotRecord, SnapshotStatus } from './snapshot-store.ts';

export type { UploadOutcome } from './snapshot-intake.ts';

/** At most this much of a file's (or a command output's) content is served. */
export const CONTENT_MAX_BYTES = 4 * 1024 * 1024;

export type SnapshotServiceOptions = {
  db: Database;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** PORTOLAN_SNAPSHOT_DATA_DIR: `<dataDir>/<id>/upload.tgz` while it waits, then `<dataDir>/<id>/files/`. */
  dataDir: string;
  /** PORTOLAN_SNAPSHOT_MAX_BYTES */
  maxUploadBytes: number;
  /** PORTOLAN_SNAPSHOT_CONCURRENCY (0: this process processes none; processes on the same store and data dir do) */
  concurrency: number;
  /** PORTOLAN_SNAPSHOT_LEASE_MS: of processing jobs, and of uploads in progress (renewed while they arrive). */
  leaseMs: number;
  /** PORTOLAN_SNAPSHOT_ACCOUNT_QUOTA_BYTES and _MAX_SNAPSHOTS (default: 2 GiB, 1000). */
  accountLimits?: AccountLimits;
  /** PORTOLAN_SNAPSHOT_JOB_RETENTION_S in ms: finished processing jobs are purged this long after they ended (default: kept). */
  jobRetentionMs?: number;
  /** Tells the uploads of processes known to be gone (default: a process of this machine that no longer exists). */
  ownerLiveness?: OwnerLiveness;
  /** The rule set file (default: the engine's rules.json). */
  rulesPath?: string;
  /** This process's identity as a job worker (unique per process start). */
  owner: string;
  /** Limits of unpacking (default: the engine's); PORTOLAN_SNAPSHOT_MAX_INFLATED_BYTES sets them (inflatedBudgetLimits). */
  extractLimits?: ExtractLimits;
  /** PORTOLAN_SNAPSHOT_TIME_BUDGET_MS (default: the processor's). */
  timeBudgetMs?: number;
  /** PORTOLAN_SNAPSHOT_MAX_ATTEMPTS (default: its default): a job whose thread or process crashed (or lease lapsed) this many times ends ERROR; a graceful stop is no attempt. */
  maxAttempts?: number;
  /** Where the engine's work runs (default: a worker thread per task); tests observe or replace it. */
  processingRunner?: ProcessingRunner;
  /** Opens an upload's archive file (default: a new file on disk); tests give one that fails as a full disk does. */
  openUploadFile?: OpenFile;
};

/**
 * The snapshots of interface C behind its HTTP handlers: uploads streamed to disk and processed by a
 * bounded background queue on the job port (a queued or interrupted job survives a restart), the
 * records of each account (one account never sees another's), the shared read-only sample `0`, the
 * diagnostics and the content of processed snapshots. Spec: specs/snapshots.yaml (info.description).
 *
 * Call start() before serving: it loads the rule set and the sample.
 *
 * @example
 * const snapshots = createSnapshotService({ db, clock, timers, logger, dataDir, maxUploadBytes, concurrency: 2, leaseMs: 60_000, owner });
 * await snapshots.start();
 * const outcome = await snapshots.upload('alice', 'alice', { contentType: req.headers['content-type'], stream: req.bodyStream });
 */
export function createSnapshotService(options: SnapshotServiceOptions) {
  const { db, clock, timers, logger, dataDir, maxUploadBytes } = options;
  const jobs = createJobQueue(db, { clock });
  let ruleSet: RuleSet | undefined;
  let sample: Sample | undefined;
  let worker: JobWorker | undefined;

  const quota = createAccountQuota({ db, limits: options.accountLimits ?? DEFAULT_ACCOUNT_LIMITS, maxUploadBytes, dataDir });
  const processor = createSnapshotProcessor({
    db,
    quota,
    dataDir,
    logger,
    ruleSet: () => {
      if (!ruleSet) throw new Error('The snapshot service has not been started.');
      return ruleSet;
    },
    ...(options.extractLimits ? { extractLimits: options.extractLimits } : {}),
    timers,
    ...(options.timeBudgetMs ? { timeBudgetMs: options.timeBudgetMs } : {}),
    ...(options.processingRunner ? { runner: options.processingRunner } : {}),
  });
  const folderOf = (id: string) => snapshotFolder(dataDir, id);
  const enqueue = (tx: Database, id: string) => jobs.enqueue(PROCESSING_QUEUE, { id }, { id: `${jobIdPrefix(id)}${randomUUID()}`, tx });

  const removeFolder = (id: string) => removeSnapshotFolder(dataDir, id, logger);

  // Uploads (their leases, the accounts' quotas) and what uploads cut off by a stopped process left.
  const machine = thisMachine();
  const uploadOwner: UploadOwner = { id: options.owner, machine, pid: process.pid };
  const intake = createSnapshotIntake({
    db,
    clock,
    timers,
    logger,
    dataDir,
    maxUploadBytes,
    quota,
    owner: uploadOwner,
    leaseMs: options.leaseMs,
    enqueue,
    ...(options.openUploadFile ? { openFile: options.openUploadFile } : {}),
  });
  const sweeper = createUploadSweeper({
    db,
    clock,
    timers,
    logger,
    dataDir,
    owner: options.owner,
    everyMs: options.leaseMs,
    isGone: options.ownerLiveness ?? processLiveness(machine, process.pid),
  });

  /** The contents of a COMPLETE snapshot of the account (or the sample) and the folder its files are in. */
  const located = async (account: string, id: string): Promise<{ contents: SnapshotContents; filesDir: string } | undefined> => {
    if (id === SAMPLE_ID) return sample && { contents: sample.contents, filesDir: sample.filesDir };
    const contents = await store.contents(db, account, id);
    return contents && { contents, filesDir: join(folderOf(id), FILES_FOLDER) };
  };

  return {
    /**
     * Loads the rule set (refused whole if invalid: throws) and the sample, queues again the processed
     * snapshots whose diagnostics come from another rule set version, and starts the worker.
     */
    async start(): Promise<void> {
      if (worker) return;
      const loaded = await loadRuleSetFile(options.rulesPath ?? DEFAULT_RULES_PATH);
      if (!loaded.ok) throw new Error(loaded.message);
      ruleSet = loaded.ruleSet;
      sample = await loadSample(ruleSet);
      await mkdir(dataDir, { recursive: true });
      // Uploads cut off by a stop: those of processes gone now, the others once their lease lapses.
      await sweeper.sweep();
      sweeper.start();
      await quota.measureUnmeasured();
      // Not those a job is about to evaluate already.
      const pending = await jobs.pendingIds(PROCESSING_QUEUE);
      const stale = (await store.staleIds(db, ruleSet.version)).filter((id) => !pending.some((job) => job.startsWith(jobIdPrefix(id))));
      if (stale.length > 0) {
        await db.transaction(async (tx) => {
          for (const id of stale) await enqueue(tx, id);
        });
        logger.info({ snapshots: stale.length, rulesVersion: ruleSet.version }, 'snapshots queued to be evaluated with the new rule set');
      }
      // Concurrency 0: this process takes uploads and answers, others on the same store process them.
      if (options.concurrency === 0) return;
      worker = createJobWorker<{ id: string }>({
        db,
        queue: PROCESSING_QUEUE,
        clock,
        timers,
        owner: options.owner,
        leaseMs: options.leaseMs,
        pollMs: Math.min(1000, Math.max(50, Math.floor(options.leaseMs / 4))),
        concurrency: options.concurrency,
        maxAttempts: options.maxAttempts ?? DEFAULT_SNAPSHOT_MAX_ATTEMPTS,
        run: (job, { signal }) => processor.run(job.payload.id, signal),
        ...(options.jobRetentionMs === undefined ? {} : { retainFinishedMs: options.jobRetentionMs }),
        giveUp: (job, reason) => processor.giveUp(job.payload.id, reason),
        logger,
      });
      worker.start();
    },

    /**
     * Stops taking jobs; a job under way is signalled at once and, unless it finishes, taken up again after the
     * restart without using one of its attempts (the job port's graceful stop).
     */
    async stop(): Promise<void> {
      const stopping = worker;
      worker = undefined;
      await sweeper.stop();
      await stopping?.stop({ graceMs: 0 });
    },

    /** `0` first, then the account's snapshots in upload order. */
    async list(account: string): Promise<string[]> {
      return [SAMPLE_ID, ...(await store.listIds(db, account))];
    },

    /**
     * Streams the multipart body's `snapshot` file to a new snapshot's folder within the account's quota;
     * once whole, saves it (PROCESSING) and queues its processing (snapshot-intake.ts). Refusals (400,
     * 413, 507) keep nothing; a store or disk failure throws, after removing what was written.
     */
    async upload(account: string, uploadedBy: string, body: UploadBody): Promise<UploadOutcome> {
      const outcome = await intake.upload(account, uploadedBy, body);
      if (outcome.ok) worker?.poke();
      return outcome;
    },

    /** The record; `0` is the sample for every account; another account's id is undefined. */
    async get(account: string, id: string): Promise<SnapshotRecord | undefined> {
      if (id === SAMPLE_ID) return sample && { ...sample.record };
      return store.get(db, account, id);
    },

    /** Sets the fields given, in any state (the same patch twice leaves the same record). */
    async update(account: string, id: string, patch: MetadataPatch): Promise<SnapshotRecord | undefined | 'read-only'> {
      if (id === SAMPLE_ID) return 'read-only';
      if (!(await store.updateMetadata(db, account, id, patch))) return undefined;
      return store.get(db, account, id);
    },

    /** Deletes one snapshot in any state: its row, its waiting job, its folder. */
    async remove(account: string, id: string): Promise<'deleted' | 'not-found' | 'read-only'> {
      if (id === SAMPLE_ID) return 'read-only';
      const deleted = await db.transaction(async (tx) => {
        if (!(await store.delete(tx, account, id))) return false;
        await jobs.cancelQueued(PROCESSING_QUEUE, jobIdPrefix(id), { tx });
        return true;
      });
      if (!deleted) return 'not-found';
      await processor.cancel(id); // its processing in this process stops (another process notices the row gone)
      await removeFolder(id);
      return 'deleted';
    },

    /** Deletes every snapshot of the account (the sample stays); the ids deleted, in upload order. */
    async removeAll(account: string): Promise<string[]> {
      const ids = await db.transaction(async (tx) => {
        const found = await store.listIds(tx, account);
        for (const id of found) {
          await store.delete(tx, account, id);
          await jobs.cancelQueued(PROCESSING_QUEUE, jobIdPrefix(id), { tx });
        }
        return found;
      });
      await Promise.all(ids.map((id) => processor.cancel(id)));
      for (const id of ids) await removeFolder(id);
      return ids;
    },

    /** The whole diagnostic output (`all`) of a COMPLETE snapshot (select a set with selectDiagnostics); undefined otherwise. */
    async diagnostics(account: string, id: string): Promise<DiagnosticOutput | undefined> {
      if (id === SAMPLE_ID) return sample?.output;
      return store.diagnostics(db, account, id);
    },

    /** The files of a COMPLETE snapshot; undefined otherwise. */
    async files(account: string, id: string): Promise<ContentEntry[] | undefined> {
      return (await located(account, id))?.contents.files;
    },

    /** One file with at most 4 MiB of its content (base64); `size` is the whole file's. */
    async file(
      account: string,
      id: string,
      fileId: string,
    ): Promise<{ id: string; value: string; size: number; truncated: boolean; content: string } | undefined> {
      const found = await located(account, id);
      const entry = found?.contents.files.find((f) => f.id === fileId);
      if (!found || !entry) return undefined;
      const { bytes, size } = await readHead(found.filesDir, entry.value);
      return { id: entry.id, value: entry.value, size, truncated: bytes.length < size, content: bytes.toString('base64') };
    },

    /** The commands of a COMPLETE snapshot; undefined otherwise. */
    async commands(account: string, id: string): Promise<ContentEntry[] | undefined> {
      return (await located(account, id))?.contents.commands;
    },

    /** One command with its output (base64; at most the first 4 MiB of it, as for files). */
    async command(account: string, id: string, commandId: string): Promise<{ id: string; value: string; output: string } | undefined> {
      const found = await located(account, id);
      const entry = found?.contents.commands.find((c) => c.id === commandId);
      if (!found || !entry) return undefined;
      const { bytes } = await readHead(found.filesDir, `commands/${entry.value}.txt`);
      return { id: entry.id, value: entry.value, output: bytes.toString('base64') };
    },
  };
}

export type SnapshotService = ReturnType<typeof createSnapshotService>;

/**
 * The first CONTENT_MAX_BYTES of a file of a snapshot, and its whole size. `path` comes from the stored
 * listing (written by the engine, which admits only plain relative names), and is checked again: it must
 * stay inside `filesDir` and be a regular file, not a link. A listed file missing on disk is a fault of
 * the store, not a 404: it throws.
 */
async function readHead(filesDir: string, path: string): Promise<{ bytes: Buffer; size: number }> {
  const root = resolve(filesDir);
  const full = resolve(root, path);
  if (!full.startsWith(root + sep)) throw new Error(`The listed path ${JSON.stringify(path)} leaves its snapshot folder.`);
  await using file = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW);
  const stat = await file.stat();
  if (!stat.isFile()) throw new Error(`The listed path ${JSON.stringify(path)} is not a regular file.`);
  const buffer = Buffer.alloc(Math.min(CONTENT_MAX_BYTES, stat.size));
  const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
  return { bytes: buffer.subarray(0, bytesRead), size: stat.size };
}
