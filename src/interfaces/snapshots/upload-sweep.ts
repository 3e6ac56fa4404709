import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Cancel, Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { removeSnapshotFolder } from './processing.ts';
import type { OwnerLiveness } from './upload-owner.ts';
import { REMOVING, uploadStore, type UploadRow } from './upload-store.ts';

/**
 * A folder no row explains (neither a snapshot nor an upload in progress) is removed once it is this old:
 * since migration 603 every upload has its row before its folder, so such a folder is one from before it,
 * or another database's on a shared data dir (never ours to remove at once).
 */
const ROWLESS_AGE_MS = 24 * 3600 * 1000;
/**
 * How often folders are checked against the rows (at start, then this often): only folders from before
 * migration 603, or another database's, can be row-less, and they are removed only once a day old anyway.
 */
export const ROWLESS_SWEEP_EVERY_MS = 24 * 3600 * 1000;

export type UploadSweepOptions = {
  db: Database;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  dataDir: string;
  /** This process's owner id: its own uploads are never swept by it. */
  owner: string;
  /** Owners known to be gone (a process of this machine that no longer exists). */
  isGone: OwnerLiveness;
  /** How often lapsed uploads are looked for after the first sweep (the upload lease); folders without rows are looked for daily. */
  everyMs: number;
};

/**
 * Removes what uploads cut off by a stopped process left: at once when their owner is known to be gone
 * (killed on this machine), else as soon as their lease lapses (the owner stopped renewing it: killed on
 * another machine, or hung). An upload a live process is receiving is renewed and never touched. The
 * uploads are swept (one query, plus one per upload to remove) at start and then every `everyMs` on the
 * injected timers; the folders that no row explains at start and then every ROWLESS_SWEEP_EVERY_MS, with
 * one query for the ids the rows know however many folders there are.
 *
 * @example
 * const sweeper = createUploadSweeper({ db, clock, timers, logger, dataDir, owner, isGone, everyMs: leaseMs });
 * await sweeper.sweep(); // at start, before serving
 * sweeper.start(); // then periodically
 */
export function createUploadSweeper(options: UploadSweepOptions) {
  const { db, clock, logger, dataDir } = options;
  let timer: Cancel | undefined;
  let running: Promise<void> | undefined;
  let rowlessSweptMs: number | undefined;

  const remove = async (row: UploadRow, why: string) => {
    await removeSnapshotFolder(dataDir, row.id, logger);
    await uploadStore.removeClaimed(db, row.id);
    logger.info({ snapshotId: row.id, reason: why }, 'removed an upload that never finished');
  };

  async function sweepUploads(): Promise<void> {
    for (const row of await uploadStore.candidates(db, options.owner)) {
      if (row.lease_expires_ms === REMOVING) {
        await remove(row, 'a removal under way was cut off');
        continue;
      }
      const lapsed = row.lease_expires_ms <= clock.nowMs();
      if (!lapsed && !options.isGone({ machine: row.owner_machine, pid: row.owner_pid })) continue;
      // Taken only if its owner did not renew it since it was read: a live owner always wins.
      if (await uploadStore.claimForRemoval(db, row)) await remove(row, lapsed ? 'its lease lapsed' : 'its process is gone');
    }
  }

  async function sweepRowless(): Promise<void> {
    const entries = await readdir(dataDir, { withFileTypes: true }).catch(() => []);
    const folders = entries.filter((entry) => entry.isDirectory() && /^[1-9][0-9]*$/.test(entry.name)).map((entry) => entry.name);
    if (folders.length === 0) return;
    // Read after the folders were listed: an upload's row exists before its folder, so a folder seen is explained by a row read now.
    const known = await uploadStore.knownIds(db);
    for (const name of folders) {
      if (known.has(name)) continue;
      const { mtimeMs } = await stat(join(dataDir, name)).catch(() => ({ mtimeMs: clock.nowMs() }));
      if (clock.nowMs() - mtimeMs < ROWLESS_AGE_MS) continue;
      await removeSnapshotFolder(dataDir, name, logger);
      logger.info({ snapshotId: name }, 'removed a day-old snapshot folder that no row explains');
    }
  }

  const sweep = (): Promise<void> =>
    (running ??= (async () => {
      try {
        await sweepUploads();
        if (rowlessSweptMs === undefined || clock.nowMs() - rowlessSweptMs >= ROWLESS_SWEEP_EVERY_MS) {
          await sweepRowless();
          rowlessSweptMs = clock.nowMs();
        }
      } finally {
        running = undefined;
      }
    })());

  const schedule = () => {
    timer = options.timers.after(
      options.everyMs,
      () =>
        void sweep()
          .catch((error: unknown) =>
            logger.warn({ error: (error as Error).message }, 'sweeping unfinished uploads failed; trying again later'),
          )
          .finally(() => timer && schedule()),
      { background: true },
    );
  };

  return {
    /** One sweep now (a start awaits it before serving). */
    sweep,
    /** Sweeps every `everyMs` until stop(). */
    start(): void {
      if (!timer) schedule();
    },
    async stop(): Promise<void> {
      const cancel = timer;
      timer = undefined;
      cancel?.();
      await running?.catch(() => undefined);
    },
  };
}

export type UploadSweeper = ReturnType<typeof createUploadSweeper>;
