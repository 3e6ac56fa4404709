import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Clock } from '../../lib/clock.ts';
import { ok, type Result } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Cancel, Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import type { AccountQuota } from './account-quota.ts';
import { ARCHIVE_NAME, removeSnapshotFolder, snapshotFolder } from './processing.ts';
import { snapshotStore as store, type SnapshotRecord } from './snapshot-store.ts';
import type { UploadOwner } from './upload-owner.ts';
import { uploadStore } from './upload-store.ts';
import { receiveUpload, type AdmitBytes, type OpenFile, type UploadRefusal } from './upload.ts';

/**
 * The new snapshot's id, or why the upload was refused (nothing of it kept): malformedBody or
 * invalidRequest (the multipart body), payloadTooLarge (the upload limit), snapshotQuotaExceeded (the
 * account's quota) or insufficientStorage (the server's disk).
 */
export type UploadOutcome = Result<{ id: string }, UploadRefusal>;
export type UploadBody = {
  contentType: string | undefined;
  stream: Readable;
  /** The request's Content-Length, when it declares one (a chunked body does not). */
  contentLength?: string | undefined;
};

/** Ids whose folder already exists (left by another database on the same data dir) are skipped, this many at most. */
const ID_TRIES = 100;

export type SnapshotIntakeOptions = {
  db: Database;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  dataDir: string;
  maxUploadBytes: number;
  quota: AccountQuota;
  owner: UploadOwner;
  /** The upload's lease: renewed every third of it while the body arrives. */
  leaseMs: number;
  /** Queues the processing of snapshot `id` in the transaction that saves it. */
  enqueue(tx: Database, id: string): Promise<unknown>;
  /** Opens an upload's archive file (default: a new file on disk); tests give one that fails. */
  openFile?: OpenFile;
};

/** The upload was swept by another process (this one stopped renewing its lease in time): a fault, not the client's. */
class UploadLost extends Error {
  override readonly name = 'UploadLost';
}

/**
 * Takes uploads in: each is an upload row (its account's reservation, leased to this process) before it is
 * a folder, streamed to `<id>/upload.tgz` while the reservation grows ahead of it, and becomes a snapshot
 * row (PROCESSING, its job queued) in the transaction that ends the upload row. Refusals keep nothing.
 *
 * @example
 * const intake = createSnapshotIntake({ db, clock, timers, logger, dataDir, maxUploadBytes, quota, owner, leaseMs, enqueue });
 * const outcome = await intake.upload('alice', 'alice', { contentType, stream, contentLength });
 */
export function createSnapshotIntake(options: SnapshotIntakeOptions) {
  const { db, clock, timers, logger, dataDir, quota, owner, leaseMs } = options;
  const folderOf = (id: string) => snapshotFolder(dataDir, id);

  /** Takes a new id, records the upload with its first reservation, and creates its folder (never one that exists). */
  async function open(account: string, declaredBytes: number | undefined) {
    await mkdir(dataDir, { recursive: true });
    for (let i = 0; i < ID_TRIES; i++) {
      const id = await store.nextId(db);
      const admitted = await quota.open({ account, id, owner, declaredBytes, nowMs: clock.nowMs(), leaseMs });
      if (!admitted.ok) return admitted;
      try {
        await mkdir(folderOf(id));
        return ok({ id, reservedBytes: admitted.value.reservedBytes });
      } catch (error) {
        await uploadStore.end(db, id, owner.id);
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        logger.warn({ snapshotId: id }, 'a folder for this new snapshot id already exists; taking the next id');
      }
    }
    throw new Error(`No free snapshot folder in ${ID_TRIES} ids: ${dataDir} holds folders of another database.`);
  }

  /** Renews the upload's lease every third of it; `onLost` when another process took the upload. */
  function holdLease(id: string, onLost: () => void): Cancel {
    let cancel: Cancel = () => undefined;
    let ended = false;
    const renew = async () => {
      try {
        if (!(await uploadStore.renew(db, id, owner.id, clock.nowMs() + leaseMs))) {
          if (!ended) onLost();
          return;
        }
      } catch (error) {
        logger.warn({ snapshotId: id, error: (error as Error).message }, 'renewing an upload lease failed; trying again');
      }
      if (!ended) cancel = timers.after(Math.max(1, Math.floor(leaseMs / 3)), () => void renew(), { background: true });
    };
    cancel = timers.after(Math.max(1, Math.floor(leaseMs / 3)), () => void renew(), { background: true });
    return () => {
      ended = true;
      cancel();
    };
  }

  /** Removes the folder, then the row (a stop in between leaves a row whose lease lapses: the sweep ends it). */
  const discard = async (id: string) => {
    await removeSnapshotFolder(dataDir, id, logger);
    await uploadStore
      .end(db, id, owner.id)
      .catch((error: unknown) =>
        logger.warn({ snapshotId: id, error: (error as Error).message }, 'ending an upload row failed; the sweep removes it'),
      );
  };

  return {
    /**
     * Streams the multipart body's `snapshot` file to a new snapshot's folder within the account's quota;
     * once whole, saves the snapshot (PROCESSING) and queues its processing in one transaction. Refusals
     * (UploadOutcome) keep nothing; a store or disk failure throws, after removing what was written.
     */
    async upload(account: string, uploadedBy: string, body: UploadBody): Promise<UploadOutcome> {
      const declared = /^\d{1,16}$/.test(body.contentLength ?? '') ? Number(body.contentLength) : undefined;
      // While the upload is admitted, nobody reads the body yet: a client going away meanwhile must not be an unhandled 'error'.
      body.stream.on('error', () => undefined);
      const opened = await open(account, declared);
      if (!opened.ok) return opened;
      const { id } = opened.value;
      let reservedBytes = opened.value.reservedBytes;
      let lost = false;
      const loseUpload = () => {
        lost = true;
        body.stream.destroy(new UploadLost('The upload was taken over by another process.'));
      };
      const releaseLease = holdLease(id, loseUpload);
      const admit: AdmitBytes = (totalBytes) => {
        if (totalBytes <= reservedBytes) return true;
        return quota.grow({ account, id, owner: owner.id, totalBytes, reservedBytes }).then((grown) => {
          if (grown === 'lost') {
            loseUpload();
            // Never the answer: the upload ends with UploadLost thrown (below) once the body stops.
            return { code: 'insufficientStorage', message: 'The upload was taken over by another process.' };
          }
          if (!grown.ok) return grown.error;
          reservedBytes = grown.value.reservedBytes;
          return true;
        });
      };

      let received;
      try {
        received = await receiveUpload({
          contentType: body.contentType,
          stream: body.stream,
          maxBytes: options.maxUploadBytes,
          destination: async () => join(folderOf(id), ARCHIVE_NAME),
          admit,
          ...(options.openFile ? { openFile: options.openFile } : {}),
        });
      } catch (error) {
        releaseLease();
        await discard(id);
        throw error;
      }
      releaseLease();
      if (lost) {
        await discard(id);
        throw new UploadLost(
          `Upload ${id} was removed by another process while it arrived (this process did not renew its lease in time).`,
        );
      }
      if (!received.ok) {
        await discard(id);
        return received;
      }
      const record: SnapshotRecord = {
        id,
        account,
        fileName: received.value.fileName,
        fileSize: received.value.fileSize,
        description: '',
        supportCase: '',
        visibleInGui: true,
        status: 'PROCESSING',
        messages: [],
        hostname: '',
        chassisSerial: '',
        platform: '',
        version: '',
        generationDate: '',
        uploadedBy,
        uploadedAtMs: clock.nowMs(),
        rulesVersion: undefined,
      };
      try {
        // The upload row becomes the snapshot row: its reservation is replaced by the file's size, at once.
        await db.transaction(async (tx) => {
          if (!(await uploadStore.end(tx, id, owner.id)))
            throw new UploadLost(`Upload ${id} was removed by another process before it was saved.`);
          await store.insert(tx, record);
          await options.enqueue(tx, id);
        });
      } catch (error) {
        await discard(id);
        throw error;
      }
      logger.info({ snapshotId: id, bytes: received.value.fileSize }, 'snapshot uploaded');
      return ok({ id });
    },
  };
}

export type SnapshotIntake = ReturnType<typeof createSnapshotIntake>;
