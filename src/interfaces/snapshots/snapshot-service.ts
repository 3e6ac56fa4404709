import { mkdir } from 'node:fs/promises';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { DEFAULT_RULES_PATH, loadRuleSetFile, type ExtractLimits, type RuleSet } from './engine/index.ts';
import { createAccountQuota, DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from './account-quota.ts';
import { createSnapshotProcessor } from './processing.ts';
import { createProcessingQueue } from './processing-queue.ts';
import type { ProcessingRunner } from './processing-runner.ts';
import { loadSample, type Sample } from './sample.ts';
import { createSnapshotEditor } from './snapshot-editor.ts';
import { createSnapshotIntake, type UploadBody, type UploadOutcome } from './snapshot-intake.ts';
import { createSnapshotReader } from './snapshot-reader.ts';
import { processLiveness, thisMachine, type OwnerLiveness } from './upload-owner.ts';
import { createUploadSweeper } from './upload-sweep.ts';
import type { OpenFile } from './upload.ts';

export type { ContentEntry, SnapshotRecord, SnapshotStatus } from './snapshot-store.ts';
export type { UploadOutcome } from './snapshot-intake.ts';
export { CONTENT_MAX_BYTES, type SnapshotCommandOutput, type SnapshotFileContent } from './snapshot-reader.ts';

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
 * The snapshots of interface C behind its HTTP handlers: uploads streamed to disk (snapshot-intake.ts)
 * and processed by a bounded background queue on the job port (processing-queue.ts; a queued or
 * interrupted job survives a restart), the records of each account (one account never sees another's),
 * the shared read-only sample `0`, the diagnostics and the content of processed snapshots
 * (snapshot-reader.ts), their changes and deletes (snapshot-editor.ts). Spec: specs/snapshots.yaml
 * (info.description). This is their composition and their start and stop.
 *
 * Call start() before serving: it loads the rule set and the sample.
 *
 * @example
 * const snapshots = createSnapshotService({ db, clock, timers, logger, dataDir, maxUploadBytes, concurrency: 2, leaseMs: 60_000, owner });
 * await snapshots.start();
 * const outcome = await snapshots.upload('alice', 'alice', { contentType: req.headers['content-type'], stream: req.bodyStream });
 */
export function createSnapshotService(options: SnapshotServiceOptions) {
  const { db, clock, timers, logger, dataDir, maxUploadBytes, leaseMs } = options;
  const loaded = loadedRules(options.rulesPath ?? DEFAULT_RULES_PATH);
  const quota = createAccountQuota({ db, limits: options.accountLimits ?? DEFAULT_ACCOUNT_LIMITS, maxUploadBytes, dataDir });
  const processor = createSnapshotProcessor({
    db,
    quota,
    dataDir,
    logger,
    ruleSet: loaded.ruleSet,
    ...(options.extractLimits ? { extractLimits: options.extractLimits } : {}),
    timers,
    ...(options.timeBudgetMs ? { timeBudgetMs: options.timeBudgetMs } : {}),
    ...(options.processingRunner ? { runner: options.processingRunner } : {}),
  });
  const queue = createProcessingQueue({
    db,
    clock,
    timers,
    logger,
    owner: options.owner,
    leaseMs,
    concurrency: options.concurrency,
    maxAttempts: options.maxAttempts,
    jobRetentionMs: options.jobRetentionMs,
    processor,
  });

  // Uploads (their leases, the accounts' quotas) and what uploads cut off by a stopped process left.
  const machine = thisMachine();
  const intake = createSnapshotIntake({
    db,
    clock,
    timers,
    logger,
    dataDir,
    maxUploadBytes,
    quota,
    leaseMs,
    owner: { id: options.owner, machine, pid: process.pid },
    enqueue: queue.enqueue,
    ...(options.openUploadFile ? { openFile: options.openUploadFile } : {}),
  });
  const sweeper = createUploadSweeper({
    db,
    clock,
    timers,
    logger,
    dataDir,
    owner: options.owner,
    everyMs: leaseMs,
    isGone: options.ownerLiveness ?? processLiveness(machine, process.pid),
  });
  const reader = createSnapshotReader({ db, dataDir, sample: loaded.sample, clock });
  const editor = createSnapshotEditor({ db, dataDir, logger, queue, processor });

  return {
    /**
     * Loads the rule set (refused whole if invalid: throws) and the sample, queues again the processed
     * snapshots whose diagnostics come from another rule set version, and starts the worker.
     */
    async start(): Promise<void> {
      if (queue.isRunning()) return;
      const ruleSet = await loaded.load();
      await mkdir(dataDir, { recursive: true });
      // Uploads cut off by a stop: those of processes gone now, the others once their lease lapses.
      await sweeper.sweep();
      sweeper.start();
      await quota.measureUnmeasured();
      await queue.requeueStale(ruleSet.version);
      queue.start();
    },

    /** Stops the sweeper and the worker (a job under way is taken up again after the restart: ProcessingQueue.stop). */
    async stop(): Promise<void> {
      await sweeper.stop();
      await queue.stop();
    },

    /**
     * Streams the multipart body's `snapshot` file to a new snapshot's folder within the account's quota;
     * once whole, saves it (PROCESSING) and queues its processing (snapshot-intake.ts). Refusals (registry
     * failures: UploadOutcome) keep nothing; a store or disk failure throws, after removing what was written.
     */
    async upload(account: string, uploadedBy: string, body: UploadBody): Promise<UploadOutcome> {
      const outcome = await intake.upload(account, uploadedBy, body);
      if (outcome.ok) queue.poke();
      return outcome;
    },

    ...reader,
    ...editor,
  };
}

export type SnapshotService = ReturnType<typeof createSnapshotService>;

/** The rule set and the sample evaluated with it, loaded at start; the rule set is asked for only once loaded. */
function loadedRules(rulesPath: string) {
  let ruleSet: RuleSet | undefined;
  let sample: Sample | undefined;
  return {
    /** Loads the rule set (throws when it is invalid: refused whole) and the sample; the rule set. */
    async load(): Promise<RuleSet> {
      const read = await loadRuleSetFile(rulesPath);
      if (!read.ok) throw new Error(read.message);
      ruleSet = read.ruleSet;
      sample = await loadSample(ruleSet);
      return ruleSet;
    },
    ruleSet: (): RuleSet => {
      if (!ruleSet) throw new Error('The snapshot service has not been started.');
      return ruleSet;
    },
    sample: (): Sample | undefined => sample,
  };
}
