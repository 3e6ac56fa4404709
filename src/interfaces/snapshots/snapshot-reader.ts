import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { DiagnosticOutput } from '../../../generated/snapshots/types.gen.ts';
import type { Database } from '../../stores/database.ts';
import { FILES_FOLDER, snapshotFolder } from './processing.ts';
import type { Clock } from '../../lib/clock.ts';
import { SAMPLE_ID, sampleExpiresAtMs, type Sample } from './sample.ts';
import { snapshotStore as store, type ContentEntry, type SnapshotContents, type SnapshotRecord } from './snapshot-store.ts';

/** At most this much of a file's (or a command output's) content is served. */
export const CONTENT_MAX_BYTES = 4 * 1024 * 1024;

/** One file of a snapshot with the head of its content (base64); `size` is the whole file's. */
export type SnapshotFileContent = { id: string; value: string; size: number; truncated: boolean; content: string };
/** One command of a snapshot with the head of its output (base64). */
export type SnapshotCommandOutput = { id: string; value: string; output: string };

export type SnapshotReaderOptions = {
  db: Database;
  /** Where processed snapshots keep their files: `<dataDir>/<id>/files/`. */
  dataDir: string;
  /** The shared sample `0`, once loaded (undefined before the service starts). */
  sample: () => Sample | undefined;
  /** Dates the sample's expiration (always ahead of now). */
  clock: Clock;
};

/**
 * What an account may read of its snapshots (one account never sees another's; `0` is the shared sample
 * for every account): records, diagnostics, the files and commands of a processed snapshot. Each read
 * answers undefined for a snapshot the account does not have, or one that is not COMPLETE.
 *
 * @example
 * const reader = createSnapshotReader({ db, dataDir, sample: () => loadedSample, clock });
 * const file = await reader.file('alice', '3', fileId); // { id, value, size, truncated, content } or undefined
 */
export function createSnapshotReader(options: SnapshotReaderOptions) {
  const { db, dataDir } = options;

  /** The contents of a COMPLETE snapshot of the account (or the sample) and the folder its files are in. */
  const located = async (account: string, id: string): Promise<{ contents: SnapshotContents; filesDir: string } | undefined> => {
    if (id === SAMPLE_ID) {
      const sample = options.sample();
      return sample && { contents: sample.contents, filesDir: sample.filesDir };
    }
    const contents = await store.contents(db, account, id);
    return contents && { contents, filesDir: join(snapshotFolder(dataDir, id), FILES_FOLDER) };
  };

  return {
    /** `0` first, then the account's snapshots in upload order. */
    async list(account: string): Promise<string[]> {
      return [SAMPLE_ID, ...(await store.listIds(db, account))];
    },

    /** The record; `0` is the sample for every account; another account's id is undefined. */
    async get(account: string, id: string): Promise<SnapshotRecord | undefined> {
      if (id === SAMPLE_ID) {
        const sample = options.sample();
        return sample && { ...sample.record, expiresAtMs: sampleExpiresAtMs(options.clock.nowMs()) };
      }
      return store.get(db, account, id);
    },

    /** The whole diagnostic output (`all`) of a COMPLETE snapshot (select a set with selectDiagnostics); undefined otherwise. */
    async diagnostics(account: string, id: string): Promise<DiagnosticOutput | undefined> {
      if (id === SAMPLE_ID) return options.sample()?.output;
      return store.diagnostics(db, account, id);
    },

    /** The files of a COMPLETE snapshot; undefined otherwise. */
    async files(account: string, id: string): Promise<ContentEntry[] | undefined> {
      return (await located(account, id))?.contents.files;
    },

    /** One file with at most 4 MiB of its content (base64); `size` is the whole file's. */
    async file(account: string, id: string, fileId: string): Promise<SnapshotFileContent | undefined> {
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
    async command(account: string, id: string, commandId: string): Promise<SnapshotCommandOutput | undefined> {
      const found = await located(account, id);
      const entry = found?.contents.commands.find((c) => c.id === commandId);
      if (!found || !entry) return undefined;
      const { bytes } = await readHead(found.filesDir, `commands/${entry.value}.txt`);
      return { id: entry.id, value: entry.value, output: bytes.toString('base64') };
    },
  };
}

export type SnapshotReader = ReturnType<typeof createSnapshotReader>;

/**
 * The first CONTENT_MAX_BYTES of a file of a snapshot, and its whole size. `path` comes from the stored
 * listing (written by the engine, which admits only plain relative names), and is checked again: it must
 * stay inside `filesDir` and be a regular file, not a link. A listed file missing on disk is a fault of
 * the store, not a missing snapshot: it throws.
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
