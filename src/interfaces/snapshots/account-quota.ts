import { fail, ok, type PortolanError, type Result } from '../../lib/errors.ts';
import type { Database } from '../../stores/database.ts';
import { folderBytes, snapshotFolder } from './processing.ts';
import { snapshotStore as store } from './snapshot-store.ts';
import type { UploadOwner } from './upload-owner.ts';
import { uploadStore } from './upload-store.ts';

/** PORTOLAN_SNAPSHOT_ACCOUNT_QUOTA_BYTES and PORTOLAN_SNAPSHOT_ACCOUNT_MAX_SNAPSHOTS: what one account may hold. */
export type AccountLimits = { bytes: number; snapshots: number };
export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = Object.freeze({ bytes: 2 * 1024 ** 3, snapshots: 1000 });

/**
 * An upload of undeclared size first reserves this much, then doubles what it holds, by at most
 * RESERVATION_STEP_MAX a step (a store transaction each): a small upload holds little that a parallel one
 * of the same account might need, a large one costs a transaction per 16 MiB.
 */
const RESERVATION_FIRST = 1024 * 1024;
const RESERVATION_STEP_MAX = 16 * 1024 * 1024;
/**
 * What the multipart framing around the file may add to a declared Content-Length: a length over what is
 * left by more than this cannot fit and is refused before a byte is read; within it, the file decides.
 */
export const MULTIPART_ALLOWANCE = 64 * 1024;

/** A refusal of the account's quota: the message gives its numbers and what to do. */
export type QuotaRefusal = PortolanError & { code: 'snapshotQuotaExceeded' };
/** The bytes now reserved for the upload, or the refusal. */
export type Admission = Result<{ reservedBytes: number }, QuotaRefusal>;

const RESERVE = { isolation: 'read-committed' } as const;

export const quotaMessage = (limits: AccountLimits, used: number) =>
  `The snapshot does not fit in the account's storage quota of ${limits.bytes} bytes (${used} in use); delete snapshots to make room.`;
export const countMessage = (limits: AccountLimits) =>
  `The account holds ${limits.snapshots} snapshots, its limit; delete snapshots to upload more.`;
export const unpackedMessage = (limits: AccountLimits, bytes: number, used: number) =>
  `The unpacked snapshot (${bytes} bytes) does not fit in the account's storage quota of ${limits.bytes} bytes (${used} in use by its other snapshots); delete snapshots and upload it again.`;
const exceeded = (message: string) => fail<QuotaRefusal>({ code: 'snapshotQuotaExceeded', message });

/**
 * The disk use of each account, held to its limits. Bytes counted: each snapshot's archive while it waits
 * and is processed, its unpacked files once processed, the reservations of its uploads in progress (the
 * sample `0` is nobody's). Every reservation of an account runs under that account's lock row, so parallel
 * uploads (on any process of the store) cannot together pass the quota; the snapshots a process is
 * unpacking at a moment may pass it briefly, by at most one snapshot's unpack limit each, and a processed
 * snapshot that does not fit ends ERROR and its files are removed.
 *
 * @example
 * const admitted = await quota.open(tx, { account, id, owner, declaredBytes: 5_000_000, nowMs, leaseMs });
 * if (!admitted.ok) return admitted; // snapshotQuotaExceeded
 */
export function createAccountQuota(options: { db: Database; limits: AccountLimits; maxUploadBytes: number; dataDir: string }) {
  const { db, limits } = options;
  // busboy lets one byte past the upload limit through before it reports it (a 413, not ours to answer).
  const ceiling = options.maxUploadBytes + 1;

  return {
    /**
     * Records a new upload of `account` with its first reservation: refused when the account is at its
     * snapshot count, has no room left, or declares a length that cannot fit.
     */
    async open(args: {
      account: string;
      id: string;
      owner: UploadOwner;
      declaredBytes: number | undefined;
      nowMs: number;
      leaseMs: number;
    }): Promise<Admission> {
      return db.transaction(async (tx) => {
        await uploadStore.lockAccount(tx, args.account);
        const used = await uploadStore.usage(tx, args.account);
        if (used.snapshots >= limits.snapshots) return exceeded(countMessage(limits));
        const left = limits.bytes - used.bytes;
        const declared = args.declaredBytes;
        if (left <= 0 || (declared !== undefined && declared - MULTIPART_ALLOWANCE > left))
          return exceeded(quotaMessage(limits, used.bytes));
        const reservedBytes = Math.min(declared ?? RESERVATION_FIRST, left, ceiling);
        await uploadStore.begin(tx, {
          id: args.id,
          account: args.account,
          owner: args.owner,
          reservedBytes,
          nowMs: args.nowMs,
          leaseMs: args.leaseMs,
        });
        return ok({ reservedBytes });
      }, RESERVE);
    },

    /** Raises the upload's reservation to at least `totalBytes`; 'lost' when the upload is no longer this owner's. */
    async grow(args: {
      account: string;
      id: string;
      owner: string;
      totalBytes: number;
      reservedBytes: number;
    }): Promise<Admission | 'lost'> {
      return db.transaction(async (tx) => {
        await uploadStore.lockAccount(tx, args.account);
        const others = await uploadStore.usage(tx, args.account, args.id);
        const left = limits.bytes - others.bytes;
        if (args.totalBytes > left) return exceeded(quotaMessage(limits, others.bytes));
        const ahead = args.reservedBytes + Math.min(Math.max(args.reservedBytes, RESERVATION_FIRST), RESERVATION_STEP_MAX);
        const reservedBytes = Math.min(Math.max(args.totalBytes, ahead), left, ceiling);
        if (!(await uploadStore.reserve(tx, args.id, args.owner, reservedBytes))) return 'lost' as const;
        return ok({ reservedBytes });
      }, RESERVE);
    },

    /**
     * Whether a processed snapshot's unpacked files (`bytes`) fit in its account's quota beside everything else
     * the account holds. Takes the account's lock in `tx`: the processor writes the outcome (COMPLETE with its
     * size, or ERROR with the message) in the same transaction, so no reservation of the account is decided
     * between the check and the write, and no reader sees COMPLETE for a snapshot that does not fit.
     */
    async admitUnpacked(tx: Database, args: { account: string; id: string; bytes: number }): Promise<Result<void, QuotaRefusal>> {
      await uploadStore.lockAccount(tx, args.account);
      const others = await uploadStore.usage(tx, args.account, args.id);
      return others.bytes + args.bytes <= limits.bytes ? ok(undefined) : exceeded(unpackedMessage(limits, args.bytes, others.bytes));
    },

    /** Measures the processed snapshots whose size was never recorded (processed before quotas were counted). */
    async measureUnmeasured(): Promise<void> {
      for (const id of await store.unmeasuredIds(db))
        await store.setStoredBytes(db, id, await folderBytes(snapshotFolder(options.dataDir, id)));
    },
  };
}

export type AccountQuota = ReturnType<typeof createAccountQuota>;
