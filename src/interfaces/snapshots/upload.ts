import { createWriteStream } from 'node:fs';
import { basename } from 'node:path';
import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { fail, type PortolanError, type Result } from '../../lib/errors.ts';

/** The file field of an upload (the spec's `SnapshotUpload`). */
export const SNAPSHOT_FIELD = 'snapshot';
const FILE_NAME_MAX = 255;

export const MALFORMED_MULTIPART = 'The request body is not a valid multipart/form-data body.';
export const MISSING_SNAPSHOT_FIELD = `The multipart file field ${SNAPSHOT_FIELD} is required.`;
export const UNEXPECTED_PART = `The multipart form may hold only one part, the file field ${SNAPSHOT_FIELD}.`;
export const tooLargeMessage = (maxBytes: number) => `The snapshot exceeds the upload limit of ${maxBytes} bytes.`;
export const DISK_FULL = 'The server has no disk space left for the snapshot; nothing of it was kept. Try again later.';
/** The file system's codes for a full disk or a spent disk quota: a refusal (insufficientStorage) as the account's quota is, not a fault. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/**
 * Why an upload is refused, as a registry failure (nothing of it is kept): the body (malformedBody,
 * invalidRequest), the upload limit (payloadTooLarge), the account's quota (snapshotQuotaExceeded) or the
 * server's disk (insufficientStorage). The spec's uploadSnapshot declares each of their statuses.
 */
export type UploadRefusal = PortolanError & {
  code: 'malformedBody' | 'invalidRequest' | 'payloadTooLarge' | 'snapshotQuotaExceeded' | 'insufficientStorage';
};

/** The file received, or why the upload is refused. */
export type ReceivedUpload = Result<{ fileName: string; fileSize: number }, UploadRefusal>;

/**
 * Asked before the file grows past what was admitted so far: `true` to go on, or the refusal (the
 * account's quota). Synchronous `true` while within a reservation already made, so most chunks cost
 * nothing; a Promise when it must ask the store (the file waits meanwhile: backpressure).
 */
export type AdmitBytes = (totalBytes: number) => true | Promise<true | UploadRefusal>;

export type ReceiveOptions = {
  contentType: string | undefined;
  /** The request body, unread. Left unpiped and flowing (its rest dropped) when the answer comes early. */
  stream: Readable;
  /** The largest file accepted, in bytes; one byte more is refused (payloadTooLarge). */
  maxBytes: number;
  /**
   * Called once, when the `snapshot` file part begins: where to write it (a file that must not exist
   * yet). May reserve an id and create a folder; the caller removes it when the outcome is not ok.
   */
  destination(): Promise<string>;
  /** Called with the file's size before each chunk is written (see AdmitBytes); default: always admitted. */
  admit?: AdmitBytes;
  /** Opens the file to write (default: openNewFile); tests give one that fails as a full disk does. */
  openFile?: OpenFile;
};

/** Opens a new file for writing; its errors are the file system's (they carry a `syscall`). */
export type OpenFile = (path: string) => Writable;
/** A file that must not exist yet (`wx`): an upload never writes over another's. */
export const openNewFile: OpenFile = (path) => createWriteStream(path, { flags: 'wx' });

/**
 * Reads a multipart/form-data body with busboy and streams its `snapshot` file part to disk as it
 * arrives: never held whole in memory, and backpressure reaches the request (a slow disk slows the
 * client). Every way a body can go wrong is an answer, never an unhandled 'error' event:
 *
 * - the file grows past `maxBytes` -> payloadTooLarge (busboy's `limit`, unhandled, would silently truncate it);
 * - `admit` refuses the next chunk (the account's quota) -> its refusal, before that chunk is written;
 * - a body that is not multipart, malformed, cut short or whose stream fails (the client went away,
 *   the adapter's body limit) -> malformedBody;
 * - no `snapshot` file part -> invalidRequest;
 * - any other part (another file, a second `snapshot`, a text field) -> invalidRequest: the spec's
 *   `SnapshotUpload` allows no other member, and a part nobody reads is not silently dropped.
 *
 * - the disk is full (ENOSPC, EDQUOT) -> insufficientStorage; the caller removes what was written.
 *
 * Resolves once the written file is closed, whatever the outcome, so the caller may remove it at once.
 * Any other disk failure is not the client's fault: it rejects with that error.
 *
 * @example
 * const received = await receiveUpload({ contentType, stream, maxBytes, destination: async () => path });
 * if (!received.ok) return received; // its error: a registry code and message
 */
export function receiveUpload(options: ReceiveOptions): Promise<ReceivedUpload> {
  const { stream: source, maxBytes } = options;
  if (!/^multipart\/form-data\s*;/i.test(options.contentType ?? '')) return Promise.resolve(refusal('malformedBody', MALFORMED_MULTIPART));
  let parser: busboy.Busboy;
  try {
    // fileSize one over the limit: busboy reports a file of exactly `fileSize` bytes as over it.
    parser = busboy({
      headers: { 'content-type': options.contentType! },
      limits: { fileSize: maxBytes + 1, files: 1, fields: 0, fieldSize: 1024, parts: 2 },
    });
  } catch {
    return Promise.resolve(refusal('malformedBody', MALFORMED_MULTIPART)); // no boundary, unparsable Content-Type
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false;
    let file: { name: string; written: Promise<number>; part: Readable } | undefined;
    let fileFailed: unknown;
    let parsed = false;

    /** Stops reading: the rest of the body is dropped as it comes (the adapter bounds how long it lingers). */
    const stopReading = () => {
      source.unpipe(parser);
      source.resume();
      parser.destroy();
    };
    /** The one outcome; waits until the file being written (if any) is closed. */
    const settle = (outcome: ReceivedUpload | { error: unknown }) => {
      if (settled) return;
      settled = true;
      if (!('ok' in outcome) || !outcome.ok) {
        stopReading();
        file?.part.destroy();
      }
      void (file?.written ?? Promise.resolve(0)).catch(() => 0).then(() => ('ok' in outcome ? resolve(outcome) : reject(outcome.error)));
    };
    const malformed = () => settle(refusal('malformedBody', MALFORMED_MULTIPART));

    const finishIfDone = () => {
      if (!parsed || settled) return;
      if (!file) return settle(refusal('invalidRequest', MISSING_SNAPSHOT_FIELD));
      const { name, written } = file;
      written.then(
        (size) => settle({ ok: true, value: { fileName: name, fileSize: size } }),
        () => (fileFailed === undefined ? malformed() : settle({ error: fileFailed })),
      );
    };

    parser.on('file', (field, part, info) => {
      // A part cut short is destroyed with an error; its writer (or nobody, for a drained part) reports it.
      part.on('error', () => undefined);
      if (field !== SNAPSHOT_FIELD || file || settled) {
        part.resume();
        settle(refusal('invalidRequest', UNEXPECTED_PART));
        return;
      }
      part.on('limit', () => settle(refusal('payloadTooLarge', tooLargeMessage(maxBytes))));
      const name = fileNameOf(info.filename);
      const refuse = (error: UploadRefusal) => settle(fail(error));
      file = {
        name,
        part,
        written: writeFile(
          part,
          options.destination,
          (error) => (fileFailed = error),
          options.admit ?? admitAll,
          refuse,
          options.openFile ?? openNewFile,
        ),
      };
      // A destination or disk failure ends the upload at once; a part cut short waits for the parser's verdict.
      file.written.catch(() => {
        if (fileFailed !== undefined) settle({ error: fileFailed });
      });
    });
    parser.on('error', malformed);
    parser.on('close', () => {
      parsed = !parser.errored;
      if (parsed) finishIfDone();
      else malformed();
    });
    // A text field, or parts past the limits: not the form the spec allows.
    const unexpected = () => settle(refusal('invalidRequest', UNEXPECTED_PART));
    parser.on('field', unexpected).on('filesLimit', unexpected).on('fieldsLimit', unexpected).on('partsLimit', unexpected);

    source.on('error', malformed);
    // A body whose stream closes before its end (a destroy without an error) would otherwise never end the parser.
    source.on('close', () => {
      if (!source.readableEnded) malformed();
    });
    // The body may have closed before it came here (the client went away while the upload was admitted).
    if (source.destroyed && !source.readableEnded) return malformed();
    source.pipe(parser);
  });
}

const admitAll: AdmitBytes = () => true;

/** Streams `part` to the file `destination()` names; resolves with its size once the file is closed. */
async function writeFile(
  part: Readable,
  destination: () => Promise<string>,
  onOwnFailure: (error: unknown) => void,
  admit: AdmitBytes,
  refuse: (error: UploadRefusal) => void,
  openFile: OpenFile,
): Promise<number> {
  let path: string;
  try {
    path = await destination();
  } catch (error) {
    onOwnFailure(error);
    part.resume();
    throw error;
  }
  // The upload was refused while the destination was being prepared: nothing to write.
  if (part.destroyed) throw new Error('The upload was refused before its file was written.');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const after = size + chunk.length;
      const pass = () => {
        size = after;
        done(null, chunk);
      };
      const admitted = admit(after);
      if (admitted === true) return pass();
      admitted.then(
        (verdict) => {
          if (verdict === true) return pass();
          refuse(verdict);
          done(new Error('The upload was refused: the account has no room for it.'));
        },
        (error: unknown) => {
          onOwnFailure(error); // the store failed: not the client's fault
          done(error as Error);
        },
      );
    },
  });
  const out = openFile(path);
  const closed = new Promise<void>((resolve) => out.once('close', resolve));
  // The file system's own failures (they carry a syscall); not the part's error, which the pipeline passes on to `out`.
  // A full disk is a refusal (RFC 4918's 507: the server cannot store what it needs to) and the caller removes the file.
  out.on('error', (error: NodeJS.ErrnoException) => {
    if (error.syscall === undefined) return;
    if (NO_SPACE.has(error.code ?? '')) refuse({ code: 'insufficientStorage', message: DISK_FULL });
    else onOwnFailure(error);
  });
  try {
    await pipeline(part, counter, out);
  } finally {
    await closed; // after an error too: nothing more is written once this settles
  }
  return size;
}

/** The uploaded file's own name (never a path), without control characters, at most 255 characters. */
export function fileNameOf(given: string | undefined): string {
  const name = basename((given ?? '').replaceAll('\\', '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return [...name].slice(0, FILE_NAME_MAX).join('') || SNAPSHOT_FIELD;
}

const refusal = (code: UploadRefusal['code'], message: string): ReceivedUpload => fail({ code, message });
