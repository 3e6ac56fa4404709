import type { Logger } from '../../lib/logger.ts';
import type { Database } from '../../stores/database.ts';
import { removeSnapshotFolder, type SnapshotProcessor } from './processing.ts';
import type { ProcessingQueue } from './processing-queue.ts';
import { SAMPLE_ID } from './sample.ts';
import { snapshotStore as store, type MetadataPatch, type SnapshotRecord } from './snapshot-store.ts';

export type SnapshotEditorOptions = {
  db: Database;
  dataDir: string;
  logger: Logger;
  /** The waiting job of a deleted snapshot is cancelled in the transaction that deletes it. */
  queue: Pick<ProcessingQueue, 'cancel'>;
  /** Its processing in this process stops before its folder is removed. */
  processor: Pick<SnapshotProcessor, 'cancel'>;
};

/**
 * What an account may change of its snapshots: their metadata, and deleting them (row, waiting job,
 * folder). The shared sample `0` is read-only: 'read-only'; a snapshot the account does not have is
 * undefined (update) or 'not-found' (remove).
 *
 * @example
 * const editor = createSnapshotEditor({ db, dataDir, logger, queue, processor });
 * await editor.remove('alice', '3'); // 'deleted'
 */
export function createSnapshotEditor(options: SnapshotEditorOptions) {
  const { db, dataDir, logger, queue, processor } = options;
  const removeFolder = (id: string) => removeSnapshotFolder(dataDir, id, logger);

  return {
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
        await queue.cancel(tx, id);
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
          await queue.cancel(tx, id);
        }
        return found;
      });
      await Promise.all(ids.map((id) => processor.cancel(id)));
      for (const id of ids) await removeFolder(id);
      return ids;
    },
  };
}

export type SnapshotEditor = ReturnType<typeof createSnapshotEditor>;
