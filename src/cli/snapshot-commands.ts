// The commands of `portolan snapshot` (upload, wait, hits, report, list, delete, delete-all): each opens a
// session, makes its calls on the generated SDK and prints what it got, or answers the one-line failure.
// Results go to stdout (an id alone, a table, a report, or with --json one JSON document), messages and
// progress to stderr, so a script can read stdout as it is.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { PassThrough, Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { styleText } from 'node:util';
import {
  deleteAllSnapshots,
  deleteSnapshot,
  getSnapshot,
  getSnapshotDiagnostics,
  listSnapshots,
  updateSnapshot,
} from '../../generated/snapshots/sdk.gen.ts';
import type { Diagnostic, DiagnosticOutput, Snapshot } from '../../generated/snapshots/types.gen.ts';
import {
  answer,
  errorCode,
  EXIT,
  failure,
  oneLine,
  openSession,
  serverMessage,
  snapshotSettings,
  unexpected,
  type Failure,
  type SnapshotSession,
} from './snapshot-session.ts';
import { pollProgress, progressBar, uploadSnapshotStream } from './snapshot-upload.ts';

const REPORT_TYPES = { pdf: 'application/pdf', csv: 'text/csv' } as const;
const IMPORTANCE_ORDER = ['critical', 'high', 'medium', 'low'];

export type SnapshotIo = {
  env: Record<string, string | undefined>;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** How the client waits between polls; tests pass one that records the intervals and returns at once. */
  sleep?: (ms: number) => Promise<void>;
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export type Outcome = Failure | undefined;
export type PollOptions = { interval: number; maxPolls: number };
export type Context = {
  io: SnapshotIo;
  /** One line of result on stdout. */
  out: (line: string) => void;
  /** One line of message on stderr. */
  err: (line: string) => void;
  sleep: (ms: number) => Promise<void>;
  /** `--target`: any role's URL of a running system, whose role map names the two roles. */
  target?: string;
};

async function connect(context: Context): Promise<SnapshotSession | Failure> {
  const decoded = await snapshotSettings(context.io.env, context.target === undefined ? {} : { target: context.target });
  return decoded.ok ? openSession(decoded.settings) : decoded;
}

/** One JSON document on stdout. */
const printJson = (context: Context, document: unknown) => context.out(JSON.stringify(document, null, 2));

/** The processing messages of a failed snapshot's record (JSON, or XML `<message>` elements). */
function processingMessages(body: unknown): string[] {
  const messages = (body as Partial<Snapshot> | undefined)?.processing_messages;
  if (Array.isArray(messages)) return messages.map((message) => oneLine(String(message)));
  if (typeof body === 'string') return [...body.matchAll(/<message>([^<]*)<\/message>/g)].map((match) => serverMessage(match[0]));
  return [];
}

/** Any status but the expected one: 422 (processing failed) with the record's messages, else status and message. */
function statusFailure(what: string, id: string, response: Response, body: unknown): Failure {
  if (response.status === 422) {
    const messages = processingMessages(body);
    return failure(
      `snapshot ${id} failed (422, processing_status ERROR): ${messages.length > 0 ? messages.join('; ') : serverMessage(body) || 'no message given'}`,
    );
  }
  return unexpected(what, response, body);
}

/** `upload <file>`: streams the archive and prints the new id alone (or JSON); then the description and the wait when asked. */
export async function upload(
  context: Context,
  file: string,
  options: { wait?: boolean; description?: string; json?: boolean } & PollOptions,
): Promise<Outcome> {
  const size = await stat(file).then(
    (info) => (info.isFile() ? info.size : 'not a file'),
    (error: unknown) => errorCode(error) ?? 'unreadable',
  );
  if (typeof size === 'string') return failure(`cannot read ${file} (${size})`, EXIT.usage);
  const session = await connect(context);
  if (!session.ok) return session;
  const fileName = basename(file);
  // Exactly the bytes stat counted: the Content-Length sent is fixed before the first byte is read.
  const body = size === 0 ? Readable.from([]) : createReadStream(file, { start: 0, end: size - 1, highWaterMark: 256 * 1024 });
  const bar = progressBar(context.io, fileName, size);
  let uploaded;
  try {
    uploaded = await uploadSnapshotStream(session, { body, size, fileName }, bar?.advance);
  } finally {
    bar?.stop();
    body.destroy();
  }
  if (!uploaded.ok) return uploaded;
  const { id, location } = uploaded;
  // The id first, alone: a script has it even when a later step fails.
  if (!options.json) context.out(id);
  context.err(`snapshot ${id} uploaded: ${location}`);
  const document: Record<string, unknown> = { id, location };
  const outcome = await describeAndWait(context, session, id, options, document);
  if (options.json) printJson(context, document);
  return outcome;
}

/** After an upload: sets the description, then waits, when asked; what they found goes into `document`. */
async function describeAndWait(
  context: Context,
  session: SnapshotSession,
  id: string,
  options: { wait?: boolean; description?: string } & PollOptions,
  document: Record<string, unknown>,
): Promise<Outcome> {
  if (options.description !== undefined) {
    const result = answer(
      await updateSnapshot({ client: session.api, path: { snapshotId: id }, body: { description: options.description } }),
      'setting the description',
      session.settings,
    );
    if (!result.ok) return result;
    if (result.response.status !== 200 && result.response.status !== 202)
      return statusFailure(`setting the description of snapshot ${id}`, id, result.response, result.error);
    document.description = options.description;
    context.err(`snapshot ${id}: description set`);
  }
  if (!options.wait) return undefined;
  const waited = await waitFor(context, session, id, options);
  Object.assign(document, waited.state);
  return waited.outcome;
}

/** Where a wait ended: ready (the record), failed (422: the record and its messages), or still processing. */
type WaitState =
  | { status: 'ready'; polls: number; snapshot: unknown }
  | { status: 'failed'; polls: number; messages: string[]; snapshot?: unknown }
  | { status: 'processing'; polls: number };

/**
 * Polls the snapshot every `interval` seconds while it answers 202, at most `maxPolls` times, showing
 * progress on stderr. The state it ended in (none when the role could not be asked), and the failure.
 */
async function waitFor(
  context: Context,
  session: SnapshotSession,
  id: string,
  polls: PollOptions,
): Promise<{ state?: WaitState; outcome: Outcome }> {
  const progress = pollProgress(context.io, id, polls.maxPolls, context.err);
  try {
    for (let poll = 1; ; poll++) {
      const result = answer(
        await getSnapshot({ client: session.api, path: { snapshotId: id } }),
        `reading snapshot ${id}`,
        session.settings,
      );
      if (!result.ok) return { outcome: result };
      const { status } = result.response;
      if (status === 200) {
        progress.done();
        const record = result.data as Partial<Snapshot>;
        const device = [record.hostname, record.chassis_serial && `chassis ${record.chassis_serial}`]
          .filter(Boolean)
          .map((text) => oneLine(String(text), 120));
        context.err(`snapshot ${id} is ready${device.length > 0 ? `: ${device.join(', ')}` : ''}`);
        return { state: { status: 'ready', polls: poll, snapshot: record }, outcome: undefined };
      }
      if (status === 422) {
        progress.done();
        const body = result.error;
        return {
          state: {
            status: 'failed',
            polls: poll,
            messages: processingMessages(body),
            ...(typeof body === 'object' && body !== null ? { snapshot: body } : {}),
          },
          outcome: statusFailure(`reading snapshot ${id}`, id, result.response, body),
        };
      }
      if (status !== 202) return { outcome: statusFailure(`reading snapshot ${id}`, id, result.response, result.error) };
      const processing = (result.error ?? result.data) as { processing_status?: unknown } | undefined;
      progress.poll(poll, oneLine(String(processing?.processing_status ?? 'PROCESSING'), 40));
      if (poll >= polls.maxPolls) {
        progress.done();
        return {
          state: { status: 'processing', polls: poll },
          outcome: failure(`snapshot ${id} still processing after ${poll} polls`, EXIT.stillProcessing),
        };
      }
      await context.sleep(Math.round(polls.interval * 1000));
    }
  } finally {
    progress.done();
  }
}

/** `wait <id>`: polls until the snapshot is processed (exit 3 when polling runs out); with --json, where it ended. */
export async function wait(context: Context, id: string, options: PollOptions & { json?: boolean }): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const waited = await waitFor(context, session, id, options);
  if (options.json && waited.state) printJson(context, { id, ...waited.state });
  return waited.outcome;
}

/** The diagnostics as a plain-text table, most important first (rule order within one importance). */
export function hitsTable(diagnostics: readonly Diagnostic[], options: { withResult: boolean; color: boolean }): string[] {
  const rank = (d: Diagnostic) => {
    const index = IMPORTANCE_ORDER.indexOf(d.run_data.h_importance);
    return index < 0 ? IMPORTANCE_ORDER.length : index;
  };
  const rows = [...diagnostics]
    .sort((a, b) => rank(a) - rank(b))
    .map((d) => [
      oneLine(d.run_data.h_importance, 20),
      ...(options.withResult ? [d.run_data.match ? 'hit' : 'miss'] : []),
      oneLine(d.name, 80),
      oneLine(d.results.h_header, 200),
    ]);
  const head = ['IMPORTANCE', ...(options.withResult ? ['RESULT'] : []), 'NAME', 'HEADER'];
  const widths = head.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const styles: Record<string, Parameters<typeof styleText>[0]> = { critical: ['bold', 'red'], high: 'red', medium: 'yellow', low: 'dim' };
  return [head, ...rows].map((row, line) =>
    row
      .map((cell, column) => {
        const padded = column === row.length - 1 ? cell : cell.padEnd(widths[column]!);
        const style = line === 0 ? 'bold' : column === 0 ? styles[cell] : undefined;
        return options.color && style ? styleText(style, padded, { validateStream: false }) : padded;
      })
      .join('  '),
  );
}

/** `hits <id>`: the diagnostics of a processed snapshot as a table; with --json the role's answer with the id. */
export async function hits(context: Context, id: string, options: { set: 'hit' | 'miss' | 'all'; json?: boolean }): Promise<Outcome> {
  const { set } = options;
  const session = await connect(context);
  if (!session.ok) return session;
  const what = `reading the diagnostics of snapshot ${id}`;
  const result = answer(
    await getSnapshotDiagnostics({ client: session.api, path: { snapshotId: id }, query: { set } }),
    what,
    session.settings,
  );
  if (!result.ok) return result;
  if (result.response.status === 202) return failure(`snapshot ${id} is still processing: run 'portolan snapshot wait ${id}' first`);
  if (result.response.status !== 200) return statusFailure(what, id, result.response, result.error);
  const output = result.data as DiagnosticOutput | undefined;
  if (!Array.isArray(output?.diagnostics?.diagnostic))
    return failure(`${what} failed: the diagnostics role answered 200 without diagnostics JSON`);
  if (options.json) {
    printJson(context, { id, ...output });
    return undefined;
  }
  const hostname = output.system_information?.hostname ?? '';
  const { hit_count: hitCount, miss_count: missCount } = output.diagnostics;
  context.out(
    `snapshot ${id} (${oneLine(hostname, 120)}): ${plural(hitCount, 'hit')}, ${plural(missCount, 'miss', 'misses')}; rule set ${oneLine(output.version, 40)}`,
  );
  if (output.diagnostics.diagnostic.length === 0) {
    context.out(set === 'hit' ? 'no hits' : `no diagnostics in set ${set}`);
    return undefined;
  }
  const color = context.io.stdout.isTTY === true && !context.io.env.NO_COLOR;
  for (const line of hitsTable(output.diagnostics.diagnostic, { withResult: set === 'all', color })) context.out(line);
  return undefined;
}

/** Copies a body to `sink` and counts its bytes; `end: false` leaves stdout open. */
async function copyBody(body: ReadableStream<Uint8Array> | null, sink: Writable, end: boolean): Promise<number> {
  const source = body ? Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]);
  let bytes = 0;
  const counter = new PassThrough();
  counter.on('data', (chunk: Buffer) => (bytes += chunk.length));
  await pipeline(source, counter, sink, { end });
  return bytes;
}

/** Streams a body into `out` through a temporary file, so a failed download leaves no partial report. */
async function download(body: ReadableStream<Uint8Array> | null, out: string): Promise<{ ok: true; bytes: number } | Failure> {
  const part = `${out}.${process.pid}.part`;
  try {
    const bytes = await copyBody(body, createWriteStream(part, { flags: 'wx' }), true);
    await rename(part, out);
    return { ok: true, bytes };
  } catch (error) {
    await rm(part, { force: true });
    return failure(`downloading the report to ${out} failed (${errorCode(error) ?? oneLine((error as Error).message, 120)})`);
  }
}

/** Streams a body to stdout; a reader that stops early (`| head`) ends the copy, not the command. */
async function toStdout(body: ReadableStream<Uint8Array> | null, stdout: Writable): Promise<{ ok: true; bytes: number } | Failure> {
  try {
    return { ok: true, bytes: await copyBody(body, stdout, false) };
  } catch (error) {
    if (errorCode(error) === 'EPIPE') return { ok: true, bytes: 0 };
    return failure(`writing the report to stdout failed (${errorCode(error) ?? oneLine((error as Error).message, 120)})`);
  }
}

export type ReportOptions = { format: keyof typeof REPORT_TYPES; out?: string; set?: 'hit' | 'miss' | 'all'; json?: boolean };

/**
 * `report <id>`: the PDF or CSV report, to `--out` (nothing partial left on failure) or else to stdout;
 * with --json (and --out) what was written, as JSON.
 */
export async function report(context: Context, id: string, options: ReportOptions): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const accept = REPORT_TYPES[options.format];
  const what = `downloading the ${options.format.toUpperCase()} report of snapshot ${id}`;
  const query = options.set === undefined ? undefined : { set: options.set };
  const result = answer(
    await getSnapshotDiagnostics({ client: session.api, path: { snapshotId: id }, query, headers: { Accept: accept }, parseAs: 'stream' }),
    what,
    session.settings,
  );
  if (!result.ok) return result;
  const { response } = result;
  if (response.status === 202) return failure(`snapshot ${id} is still processing: run 'portolan snapshot wait ${id}' first`);
  if (response.status !== 200) return statusFailure(what, id, response, result.error);
  const type = response.headers.get('content-type') ?? '';
  if (!type.toLowerCase().startsWith(accept)) {
    await response.body?.cancel();
    return failure(`${what} failed: the diagnostics role answered ${oneLine(type || 'no Content-Type', 80)} instead of ${accept}`);
  }
  if (options.out === undefined) {
    const written = await toStdout(response.body, context.io.stdout);
    return written.ok ? undefined : written;
  }
  const written = await download(response.body, options.out);
  if (!written.ok) return written;
  context.err(`wrote ${written.bytes} bytes (${accept}) to ${options.out}`);
  if (options.json) printJson(context, { id, format: options.format, contentType: accept, bytes: written.bytes, file: options.out });
  return undefined;
}

/** `list`: the account's snapshot ids, one a line (with --json: `{"ids": [...]}`). */
export async function list(context: Context, options: { json?: boolean } = {}): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const result = answer(await listSnapshots({ client: session.api }), 'listing snapshots', session.settings);
  if (!result.ok) return result;
  if (result.response.status !== 200) return unexpected('listing snapshots', result.response, result.error);
  const ids = (result.data as { id?: unknown } | undefined)?.id;
  if (!Array.isArray(ids)) return failure('listing snapshots failed: the diagnostics role answered 200 without a JSON list of ids');
  const shown = ids.map((id) => oneLine(String(id), 80));
  if (options.json) printJson(context, { ids: shown });
  else for (const id of shown) context.out(id);
  return undefined;
}

/** `delete <id>` (one snapshot) and `delete-all` (`id` undefined); with --json `{"deleted": [...]}`. */
export async function remove(context: Context, id: string | undefined, options: { json?: boolean } = {}): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const what = id === undefined ? 'deleting all snapshots' : `deleting snapshot ${id}`;
  const call =
    id === undefined ? deleteAllSnapshots({ client: session.api }) : deleteSnapshot({ client: session.api, path: { snapshotId: id } });
  const result = answer(await call, what, session.settings);
  if (!result.ok) return result;
  if (result.response.status !== 200) return unexpected(what, result.response, result.error);
  const ids = id !== undefined ? [id] : (result.data?.id ?? []).map((deleted) => oneLine(String(deleted), 80));
  if (options.json) printJson(context, { deleted: ids });
  else if (id !== undefined) context.out(`snapshot ${id} deleted`);
  else
    context.out(
      `${plural(ids.length, 'snapshot')} deleted${ids.length > 0 ? `: ${ids.join(' ')}` : ''} (the shared sample snapshot 0 stays)`,
    );
  return undefined;
}
