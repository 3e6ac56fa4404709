// `portolan snapshot upload`'s transfer: the snapshot streamed from disk as a multipart body the client
// encodes while fetch sends it (no file is held in memory), with a progress bar on a terminal; and the
// progress of a wait (a bar on a terminal, a line per poll elsewhere).
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import { SingleBar } from 'cli-progress';
import { uploadSnapshot } from '../../generated/snapshots/sdk.gen.ts';
import type { SnapshotUpload } from '../../generated/snapshots/types.gen.ts';
import { answer, errorCode, failure, oneLine, SNAPSHOT_ID, unexpected, type Failure, type SnapshotSession } from './snapshot-session.ts';

/** A snapshot to upload: its bytes as they are read, their exact count and the file name to send. */
export type UploadSource = { body: AsyncIterable<Uint8Array>; size: number; fileName: string };

/** `filename` parameters of the part: quoted ASCII, and RFC 5987 `filename*` when the name is not ASCII. */
function fileNameParameters(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return /^[\x20-\x7e]*$/.test(name) ? `filename="${ascii}"` : `filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * The multipart/form-data body of an upload (the one file field `snapshot`), encoded while the source is
 * read: the part's head, the source's chunks as fetch pulls them, the closing boundary. Nothing is held
 * beyond the chunk in flight, so a file of any size costs the same memory.
 */
function multipartBody(
  source: UploadSource,
  onBytes?: (bytes: number) => void,
): { stream: ReadableStream<Uint8Array>; contentType: string; length: number; readError: () => unknown } {
  const boundary = `----portolan-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="snapshot"; ${fileNameParameters(source.fileName)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let readError: unknown;
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield head;
    try {
      for await (const chunk of source.body) {
        onBytes?.(chunk.byteLength);
        yield chunk;
      }
    } catch (error) {
      // Kept to tell "the file could not be read" from "the connection broke" when fetch fails.
      readError = error;
      throw error;
    }
    yield tail;
  }
  const chunks = parts();
  // Pulled one chunk at a time (high-water mark 0): the file is read only as fast as the socket takes it.
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + source.size + tail.length,
    readError: () => readError,
  };
}

/**
 * Uploads one snapshot as a streamed multipart body and answers its id from the 302's `Location`.
 *
 * @example
 * const uploaded = await uploadSnapshotStream(session, { body: createReadStream(path), size, fileName: 'lb1.tgz' });
 */
export async function uploadSnapshotStream(
  session: SnapshotSession,
  source: UploadSource,
  onBytes?: (bytes: number) => void,
): Promise<{ ok: true; id: string; location: string } | Failure> {
  const body = multipartBody(source, onBytes);
  const options = {
    client: session.api,
    // The SDK types the form as an object with a Blob; the body here is the form already encoded, as a stream.
    body: body.stream as unknown as SnapshotUpload,
    bodySerializer: null,
    headers: { 'Content-Type': body.contentType, 'Content-Length': String(body.length) },
    duplex: 'half' as const,
    redirect: 'manual' as const,
    parseAs: 'text' as const,
  };
  const sent = await uploadSnapshot(options);
  const readError = body.readError();
  if (readError !== undefined)
    return failure(
      `upload failed: reading ${source.fileName} failed (${errorCode(readError) ?? oneLine(String((readError as Error).message), 120)})`,
    );
  const result = answer(sent, 'upload', session.settings);
  if (!result.ok) return result;
  if (result.response.status !== 302) return unexpected('upload', result.response, result.error);
  const location = result.response.headers.get('location');
  const id = location === null ? undefined : /\/snapshots\/([^/?#]+)\/?(?:[?#].*)?$/.exec(location)?.[1];
  if (location === null || id === undefined || !SNAPSHOT_ID.test(id))
    return failure(`upload failed: the diagnostics role answered 302 without a snapshot Location (${oneLine(location ?? 'none', 120)})`);
  return { ok: true, id, location: new URL(location, `${session.settings.diagnosticsUrl}/`).href };
}

/** A progress bar on stderr when it is a terminal; nothing otherwise (pipes and logs stay clean). */
export function progressBar(
  io: { stderr: Writable & { isTTY?: boolean } },
  fileName: string,
  size: number,
): { advance: (bytes: number) => void; stop: () => void } | undefined {
  if (io.stderr.isTTY !== true) return undefined;
  const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
  const bar = new SingleBar({
    stream: io.stderr,
    format: 'uploading {file} [{bar}] {percentage}% {sent}/{size} MB, ETA {eta_formatted}',
    barsize: 30,
    hideCursor: null,
    gracefulExit: false,
  });
  let sent = 0;
  bar.start(size, 0, { file: oneLine(fileName, 40), sent: mb(0), size: mb(size) });
  return {
    advance: (bytes) => {
      sent += bytes;
      bar.update(sent, { sent: mb(sent) });
    },
    stop: () => bar.stop(),
  };
}

/** What a wait shows while it polls: `poll` after each answer 202, `done` once it ended (more calls do nothing). */
export type PollProgress = { poll: (poll: number, status: string) => void; done: () => void };

/**
 * Progress of a wait on stderr: on a terminal a bar of the polls used out of the most allowed, redrawn in
 * place; elsewhere (a pipe, a CI log) one line per poll with the snapshot's status, written by `line`.
 *
 * @example
 * const progress = pollProgress(io, '41', 150);
 * progress.poll(1, 'PROCESSING'); // "snapshot 41: PROCESSING (poll 1 of at most 150)" when stderr is not a terminal
 * progress.done();
 */
export function pollProgress(
  io: { stderr: Writable & { isTTY?: boolean } },
  id: string,
  maxPolls: number,
  line: (text: string) => void = (text) => void io.stderr.write(`${text}\n`),
): PollProgress {
  if (io.stderr.isTTY !== true) {
    return {
      poll: (poll, status) => line(`snapshot ${id}: ${status} (poll ${poll} of at most ${maxPolls})`),
      done: () => {},
    };
  }
  let bar: SingleBar | undefined;
  return {
    poll: (poll, status) => {
      if (!bar) {
        bar = new SingleBar({
          stream: io.stderr,
          format: 'waiting for snapshot {id} [{bar}] poll {value} of at most {total}: {status}',
          barsize: 20,
          hideCursor: null,
          gracefulExit: false,
        });
        bar.start(maxPolls, poll, { id: oneLine(id, 64), status });
      } else bar.update(poll, { status });
    },
    done: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}
