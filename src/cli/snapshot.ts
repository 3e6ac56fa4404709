// `portolan snapshot`: the client of the snapshot diagnostics API (C), on the generated SDK. It logs in at
// the login role with credentials from the environment (never from the command line), then uploads a
// snapshot (streamed from disk, a progress bar on a terminal), waits for it with bounded polling, prints
// its hits, downloads its report, lists and deletes. Every failure is one line naming what to fix.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { styleText } from 'node:util';
import { SingleBar } from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { createClient, type Client } from '../../generated/snapshots/client/index.ts';
import {
  deleteAllSnapshots,
  deleteSnapshot,
  getSnapshot,
  getSnapshotDiagnostics,
  listSnapshots,
  loginDiagnosticsUser,
  updateSnapshot,
  uploadSnapshot,
} from '../../generated/snapshots/sdk.gen.ts';
import type { Diagnostic, DiagnosticOutput, Snapshot, SnapshotUpload } from '../../generated/snapshots/types.gen.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2, stillProcessing: 3 } as const;
export const DEFAULTS = {
  diagnosticsUrl: 'http://127.0.0.1:8300',
  loginUrl: 'http://127.0.0.1:8301',
  intervalSeconds: 2,
  maxPolls: 150,
} as const;

const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const REPORT_TYPES = { pdf: 'application/pdf', csv: 'text/csv' } as const;
const IMPORTANCE_ORDER = ['critical', 'high', 'medium', 'low'];
const SNAPSHOT_ID = /^[A-Za-z0-9_-]{1,64}$/;
// Connection failures that mean "nothing answers there", as opposed to a connection that broke midway.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

const SETTINGS_HELP = `
Settings (environment variables only; credentials are never taken from the command line):
  PORTOLAN_DIAGNOSTICS_URL       diagnostics role (default ${DEFAULTS.diagnosticsUrl})
  PORTOLAN_LOGIN_URL             login role (default ${DEFAULTS.loginUrl})
  PORTOLAN_DIAGNOSTICS_USER      user id for the login form
  PORTOLAN_DIAGNOSTICS_PASSWORD  its password
  (when neither is set: PORTOLAN_ADMIN_USER, default admin, and PORTOLAN_ADMIN_PASSWORD)

Exit codes: 0 done, 1 failed (the message says why), 2 usage or settings,
            3 still processing when polling ran out.`;

export type SnapshotIo = {
  env: Record<string, string | undefined>;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** How the client waits between polls; tests pass one that records the intervals and returns at once. */
  sleep?: (ms: number) => Promise<void>;
};

/** An expected failure: the one line to print, the exit code, and the HTTP status when a role answered one. */
export type Failure = { ok: false; code: number; message: string; status?: number };
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const failure = (message: string, code: number = EXIT.failed, status?: number): Failure => ({
  ok: false,
  code,
  message,
  ...(status === undefined ? {} : { status }),
});

export type SnapshotSettings = { diagnosticsUrl: string; loginUrl: string; user: string; password: string; credentialVars: string };

/** Decodes the client's settings from the environment, or says which variable to set or fix. */
export function snapshotSettings(env: Record<string, string | undefined>): { ok: true; settings: SnapshotSettings } | Failure {
  const value = (name: string) => (env[name] === '' ? undefined : env[name]);
  const urls: Record<string, string> = {};
  for (const [key, name, fallback] of [
    ['diagnosticsUrl', 'PORTOLAN_DIAGNOSTICS_URL', DEFAULTS.diagnosticsUrl],
    ['loginUrl', 'PORTOLAN_LOGIN_URL', DEFAULTS.loginUrl],
  ] as const) {
    const raw = value(name) ?? fallback;
    const url = URL.canParse(raw) ? new URL(raw) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return failure(`${name} must be an http or https URL`, EXIT.usage);
    if (url.username || url.password)
      return failure(
        `${name} must not hold a user or password: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD`,
        EXIT.usage,
      );
    urls[key] = url.href.replace(/\/+$/, '');
  }
  const diagnostics = { user: value('PORTOLAN_DIAGNOSTICS_USER'), password: value('PORTOLAN_DIAGNOSTICS_PASSWORD') };
  let credentials: { user: string | undefined; password: string | undefined; vars: string };
  if (diagnostics.user !== undefined || diagnostics.password !== undefined) {
    credentials = { ...diagnostics, vars: 'PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD' };
  } else {
    // The reference system's administrative account may use the diagnostics API too (DESIGN.md, "Accounts").
    credentials = {
      user: value('PORTOLAN_ADMIN_USER') ?? 'admin',
      password: value('PORTOLAN_ADMIN_PASSWORD'),
      vars: 'PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD',
    };
    if (credentials.password === undefined) {
      return failure(
        'missing credentials: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD (or PORTOLAN_ADMIN_PASSWORD)',
        EXIT.usage,
      );
    }
  }
  if (credentials.user === undefined || credentials.password === undefined) {
    return failure(`missing credentials: set both ${credentials.vars}`, EXIT.usage);
  }
  return {
    ok: true,
    settings: {
      diagnosticsUrl: urls.diagnosticsUrl!,
      loginUrl: urls.loginUrl!,
      user: credentials.user,
      password: credentials.password,
      credentialVars: credentials.vars,
    },
  };
}

/** A URL as it may be printed: without any user or password in it. */
function shown(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/$/, '');
}

/** One printable line: no control characters (no terminal escapes from a server), at most `max` characters. */
function oneLine(text: string, max = 300): string {
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** The server's error message: `message` of a JSON error, of an XML `<error>` (answers to PDF/CSV requests), or the text. */
function serverMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string')
    return oneLine((error as { message: string }).message);
  if (typeof error !== 'string') return '';
  const xml = /<message>([^<]*)<\/message>/.exec(error);
  if (!xml) return oneLine(error);
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return oneLine(xml[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => entities[name]!));
}

function errorCode(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** What a request that got no answer means, naming the setting to check. */
function noAnswer(what: string, url: string, role: string, variable: string, error: unknown): Failure {
  const code = errorCode(error);
  if (code === undefined || UNREACHABLE_CODES.has(code))
    return failure(`cannot reach ${shown(url)}${code ? ` (${code})` : ''}: is the ${role} role running? (${variable})`);
  return failure(`${what} failed: the connection to ${shown(url)} broke (${code})`);
}

/** A status the command does not expect: the status and the server's message. */
function unexpected(what: string, response: Response, error: unknown): Failure {
  const message = serverMessage(error);
  const unimplemented = response.status === 501 ? ' (this system does not implement the diagnostics API yet)' : '';
  return failure(
    `${what} failed: the diagnostics role answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${message ? `: ${message}` : ''}${unimplemented}`,
    EXIT.failed,
    response.status,
  );
}

type SdkResult = { data?: unknown; error?: unknown; response?: Response };

/** The answer of one SDK call to the diagnostics role, or the failure when there was none. */
function answer<R extends SdkResult>(
  result: R,
  what: string,
  settings: SnapshotSettings,
): (R & { ok: true; response: Response }) | Failure {
  if (!result.response) return noAnswer(what, settings.diagnosticsUrl, 'diagnostics', 'PORTOLAN_DIAGNOSTICS_URL', result.error);
  return { ...result, ok: true, response: result.response };
}

export type SnapshotSession = { ok: true; api: Client; settings: SnapshotSettings };

/**
 * Logs in at the login role and answers an SDK client for the diagnostics role that sends the session
 * cookies. The cookies come on the login's 302 (redirects are not followed); the login succeeded only
 * when `sso_completed=1` is among them.
 *
 * @example
 * const session = await openSession(settings);
 * if (!session.ok) throw new Error(session.message);
 * await listSnapshots({ client: session.api });
 */
export async function openSession(settings: SnapshotSettings): Promise<SnapshotSession | Failure> {
  const login = createClient({ baseUrl: settings.loginUrl, headers: { Accept: JSON_TYPE } });
  const result = await loginDiagnosticsUser({
    client: login,
    body: { userid: settings.user, passwd: settings.password },
    redirect: 'manual',
    parseAs: 'text',
  });
  if (!result.response) return noAnswer('login', settings.loginUrl, 'login', 'PORTOLAN_LOGIN_URL', result.error);
  const { status } = result.response;
  const cookies = result.response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';', 1)[0]!.trim())
    .filter((pair) => pair.includes('='));
  if (status < 400 && cookies.includes('sso_completed=1')) {
    const api = createClient({ baseUrl: settings.diagnosticsUrl, headers: { Accept: JSON_TYPE, Cookie: cookies.join('; ') } });
    return { ok: true, api, settings };
  }
  // A redirect without the marker is how the real login page says no; 400, 401 and 403 refuse the form.
  if (status < 400 || status === 400 || status === 401 || status === 403)
    return failure(`login failed: check ${settings.credentialVars}`, EXIT.failed, status);
  const message = serverMessage(result.error);
  return failure(
    `login failed: ${shown(settings.loginUrl)} answered ${status}${message ? `: ${message}` : ''}; is PORTOLAN_LOGIN_URL the login role?`,
    EXIT.failed,
    status,
  );
}

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

type Outcome = Failure | undefined;
type PollOptions = { interval: number; maxPolls: number };
type Context = { io: SnapshotIo; out: (line: string) => void; sleep: (ms: number) => Promise<void> };

async function connect(context: Context): Promise<SnapshotSession | Failure> {
  const decoded = snapshotSettings(context.io.env);
  return decoded.ok ? openSession(decoded.settings) : decoded;
}

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

async function upload(context: Context, file: string, options: { wait?: boolean; description?: string } & PollOptions): Promise<Outcome> {
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
  context.out(`snapshot ${uploaded.id} uploaded: ${uploaded.location}`);
  if (options.description !== undefined) {
    const result = answer(
      await updateSnapshot({ client: session.api, path: { snapshotId: uploaded.id }, body: { description: options.description } }),
      'setting the description',
      session.settings,
    );
    if (!result.ok) return result;
    if (result.response.status !== 200 && result.response.status !== 202)
      return statusFailure(`setting the description of snapshot ${uploaded.id}`, uploaded.id, result.response, result.error);
    context.out(`snapshot ${uploaded.id}: description set`);
  }
  return options.wait ? waitFor(context, session, uploaded.id, options) : undefined;
}

/** Polls the snapshot every `interval` seconds while it answers 202, at most `maxPolls` times. */
async function waitFor(context: Context, session: SnapshotSession, id: string, polls: PollOptions): Promise<Outcome> {
  for (let poll = 1; ; poll++) {
    const result = answer(await getSnapshot({ client: session.api, path: { snapshotId: id } }), `reading snapshot ${id}`, session.settings);
    if (!result.ok) return result;
    const { status } = result.response;
    if (status === 200) {
      const record = result.data as Partial<Snapshot>;
      const device = [record.hostname, record.chassis_serial && `chassis ${record.chassis_serial}`]
        .filter(Boolean)
        .map((text) => oneLine(String(text), 120));
      context.out(`snapshot ${id} is ready${device.length > 0 ? `: ${device.join(', ')}` : ''}`);
      return undefined;
    }
    if (status !== 202) return statusFailure(`reading snapshot ${id}`, id, result.response, result.error);
    if (poll >= polls.maxPolls) return failure(`snapshot ${id} still processing after ${poll} polls`, EXIT.stillProcessing);
    await context.sleep(Math.round(polls.interval * 1000));
  }
}

async function wait(context: Context, id: string, polls: PollOptions): Promise<Outcome> {
  const session = await connect(context);
  return session.ok ? waitFor(context, session, id, polls) : session;
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

async function hits(context: Context, id: string, set: 'hit' | 'miss' | 'all'): Promise<Outcome> {
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

/** Streams a body into `out` through a temporary file, so a failed download leaves no partial report. */
async function download(body: ReadableStream<Uint8Array> | null, out: string): Promise<{ ok: true; bytes: number } | Failure> {
  const part = `${out}.${process.pid}.part`;
  let bytes = 0;
  try {
    const source = body ? Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]);
    const counter = new PassThrough();
    counter.on('data', (chunk: Buffer) => (bytes += chunk.length));
    await pipeline(source, counter, createWriteStream(part, { flags: 'wx' }));
    await rename(part, out);
    return { ok: true, bytes };
  } catch (error) {
    await rm(part, { force: true });
    return failure(`downloading the report to ${out} failed (${errorCode(error) ?? oneLine((error as Error).message, 120)})`);
  }
}

async function report(
  context: Context,
  id: string,
  options: { format: keyof typeof REPORT_TYPES; out: string; set?: 'hit' | 'miss' | 'all' },
): Promise<Outcome> {
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
  const written = await download(response.body, options.out);
  if (!written.ok) return written;
  context.out(`wrote ${written.bytes} bytes (${accept}) to ${options.out}`);
  return undefined;
}

async function list(context: Context): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const result = answer(await listSnapshots({ client: session.api }), 'listing snapshots', session.settings);
  if (!result.ok) return result;
  if (result.response.status !== 200) return unexpected('listing snapshots', result.response, result.error);
  const ids = (result.data as { id?: unknown } | undefined)?.id;
  if (!Array.isArray(ids)) return failure('listing snapshots failed: the diagnostics role answered 200 without a JSON list of ids');
  for (const id of ids) context.out(oneLine(String(id), 80));
  return undefined;
}

async function remove(context: Context, id: string | undefined): Promise<Outcome> {
  const session = await connect(context);
  if (!session.ok) return session;
  const what = id === undefined ? 'deleting all snapshots' : `deleting snapshot ${id}`;
  const call =
    id === undefined ? deleteAllSnapshots({ client: session.api }) : deleteSnapshot({ client: session.api, path: { snapshotId: id } });
  const result = answer(await call, what, session.settings);
  if (!result.ok) return result;
  if (result.response.status !== 200) return unexpected(what, result.response, result.error);
  if (id !== undefined) {
    context.out(`snapshot ${id} deleted`);
    return undefined;
  }
  const ids = (result.data?.id ?? []).map((deleted) => oneLine(String(deleted), 80));
  context.out(
    `${plural(ids.length, 'snapshot')} deleted${ids.length > 0 ? `: ${ids.join(' ')}` : ''} (the shared sample snapshot 0 stays)`,
  );
  return undefined;
}

/** A progress bar on stderr when it is a terminal; nothing otherwise (pipes and logs stay clean). */
function progressBar(io: SnapshotIo, fileName: string, size: number): { advance: (bytes: number) => void; stop: () => void } | undefined {
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

function snapshotId(value: string): string {
  if (!SNAPSHOT_ID.test(value)) throw new InvalidArgumentError('a snapshot id is 1 to 64 letters, digits, _ or -.');
  return value;
}

function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || number > 3600)
    throw new InvalidArgumentError('must be a number of seconds above 0, at most 3600.');
  return number;
}

function count(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 100_000)
    throw new InvalidArgumentError('must be a whole number from 1 to 100000.');
  return number;
}

const pollOptions = (command: Command) =>
  command
    .addOption(
      new Option('--interval <seconds>', 'seconds between polls while the snapshot answers 202')
        .argParser(seconds)
        .default(DEFAULTS.intervalSeconds),
    )
    .addOption(new Option('--max-polls <count>', 'polls before giving up (exit 3)').argParser(count).default(DEFAULTS.maxPolls));

/** The command tree; each action hands its outcome to `done`. */
function snapshotProgram(
  context: Context,
  write: { out: (text: string) => void; err: (text: string) => void },
  done: (outcome: Outcome) => void,
): Command {
  const width = (stream: Writable) => Math.min(120, (stream as { columns?: number }).columns ?? 100);
  const program = new Command('portolan snapshot')
    .description(
      'Client of the snapshot diagnostics API (interface C): upload device snapshots, wait for their processing, read their hits and reports.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: write.out,
      writeErr: write.err,
      getOutHelpWidth: () => width(context.io.stdout),
      getErrHelpWidth: () => width(context.io.stderr),
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', SETTINGS_HELP);
  const run =
    <A extends unknown[]>(action: (...args: A) => Promise<Outcome>) =>
    async (...args: A) =>
      done(await action(...args));
  const idArgument = ['<id>', 'snapshot id (0 is the shared sample)', snapshotId] as const;

  pollOptions(
    program
      .command('upload')
      .description('Upload a snapshot archive (streamed from disk; a progress bar on a terminal) and print its id.')
      .argument('<file>', 'the snapshot archive (gzip-compressed tar)')
      .option('--wait', 'then poll until it is processed (like `wait`)')
      .option('--description <text>', "set the snapshot's description after the upload"),
  ).action(run((file: string, options: { wait?: boolean; description?: string } & PollOptions) => upload(context, file, options)));

  pollOptions(
    program
      .command('wait')
      .description('Poll a snapshot while it is processing (202) until it is ready (200); exit 3 when polling runs out, 1 when it failed.')
      .argument(...idArgument),
  ).action(run((id: string, options: PollOptions) => wait(context, id, options)));

  program
    .command('hits')
    .description('Print the diagnostics of a processed snapshot as a table, most important first.')
    .argument(...idArgument)
    .addOption(new Option('--set <set>', 'which diagnostics').choices(['hit', 'miss', 'all']).default('hit'))
    .action(run((id: string, options: { set: 'hit' | 'miss' | 'all' }) => hits(context, id, options.set)));

  program
    .command('report')
    .description('Download the diagnostic report of a snapshot as PDF or CSV.')
    .argument(...idArgument)
    .addOption(new Option('--format <format>', 'report format').choices(['pdf', 'csv']).makeOptionMandatory())
    .requiredOption('--out <file>', 'where to write the report')
    .addOption(new Option('--set <set>', 'which diagnostics (default: all)').choices(['hit', 'miss', 'all']))
    .action(
      run((id: string, options: { format: 'pdf' | 'csv'; out: string; set?: 'hit' | 'miss' | 'all' }) => report(context, id, options)),
    );

  program
    .command('list')
    .description("List the account's snapshot ids (0 is the shared sample).")
    .action(run(() => list(context)));

  program
    .command('delete')
    .description('Delete one snapshot.')
    .argument(...idArgument)
    .action(run((id: string) => remove(context, id)));

  program
    .command('delete-all')
    .description("Delete all of the account's snapshots (the shared sample 0 stays).")
    .action(run(() => remove(context, undefined)));

  for (const command of program.commands) command.addHelpText('after', SETTINGS_HELP);
  return program;
}

/**
 * Runs one `portolan snapshot` command line (the arguments after `snapshot`) and resolves to its exit code:
 * 0 done, 1 failed, 2 usage or settings, 3 still processing when polling ran out. Settings and credentials
 * come from `io.env` only; nothing printed ever contains the password.
 *
 * @example
 * const code = await runSnapshotCommand(['upload', 'lb1.tgz', '--wait'], { env: process.env, stdout: process.stdout, stderr: process.stderr });
 */
export async function runSnapshotCommand(args: readonly string[], io: SnapshotIo): Promise<number> {
  // Defence in depth: the password is never put into a message, but a server could echo it back.
  const secrets = [io.env.PORTOLAN_DIAGNOSTICS_PASSWORD, io.env.PORTOLAN_ADMIN_PASSWORD].filter(
    (secret): secret is string => secret !== undefined && secret.length >= 4,
  );
  const redact = (text: string) => secrets.reduce((safe, secret) => safe.replaceAll(secret, '***'), text);
  const write = { out: (text: string) => void io.stdout.write(redact(text)), err: (text: string) => void io.stderr.write(redact(text)) };
  // A reader that closes the pipe early (`portolan snapshot hits 0 | head`) ends the output, not the command.
  for (const stream of [io.stdout, io.stderr]) if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  const context: Context = { io, out: (line) => write.out(`${line}\n`), sleep: io.sleep ?? ((ms) => delay(ms)) };
  let outcome: Outcome;
  try {
    await snapshotProgram(context, write, (result) => (outcome = result)).parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError)
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    write.err(`unexpected error (a bug, please report it): ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.failed;
  }
  if (outcome === undefined) return EXIT.ok;
  write.err(`${outcome.message}\n`);
  return outcome.code;
}

/**
 * The same command with its output captured: for tests, and for an end-to-end test of the real system
 * (point PORTOLAN_DIAGNOSTICS_URL and PORTOLAN_LOGIN_URL at its roles).
 *
 * @example
 * const { code, stdout } = await runSnapshotCli(['list'], { env: { PORTOLAN_DIAGNOSTICS_URL: url, PORTOLAN_LOGIN_URL: login, PORTOLAN_ADMIN_PASSWORD: pw } });
 */
export async function runSnapshotCli(
  args: readonly string[],
  options: { env: Record<string, string | undefined>; sleep?: (ms: number) => Promise<void> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const capture = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    });
    return { stream, text: () => text };
  };
  const [stdout, stderr] = [capture(), capture()];
  const code = await runSnapshotCommand(args, {
    env: options.env,
    stdout: stdout.stream,
    stderr: stderr.stream,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
