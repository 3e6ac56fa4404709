// The process logger (pino): JSON lines for machines, one readable line per record on a terminal, credentials
// redacted in both; and the access line of every request, composed directly (accessLogger).
import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import type { prettyFactory as PrettyFactory } from 'pino-pretty';

export type Logger = PinoLogger;

/** Every place a credential, token or secret can sit in a log record; pino replaces them. */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'passwd',
  '*.passwd',
  'secret',
  '*.secret',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'token',
  '*.token',
  'id_token',
  '*.id_token',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-vendor-auth-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-vendor-auth-token"]',
];

export type LogFormat = 'auto' | 'json' | 'pretty';

export type LoggerOptions = {
  level: string;
  name?: string;
  /** json (default): one JSON object per line; pretty: pino-pretty's readable lines; auto: pretty when stdout is a terminal. */
  format?: LogFormat;
  /** Where lines go (default: stdout). */
  destination?: DestinationStream;
  /** Whether the destination is a terminal, for `auto` (default: process.stdout.isTTY). */
  isTerminal?: boolean;
};

/** Lines waiting for stdout at most (a reader that stops reading costs memory up to here; later lines are dropped). */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * Standard output written asynchronously (pino's sonic-boom, in this thread): lines leave in writes of 4 KB or
 * more, at least every 100 ms, handed to the kernel off the request's path, so a request never waits on a
 * write(2) of its access line (one synchronous write per line cost the mapping role ~40 % of its throughput).
 * Whatever is pending is written when the process exits (pino registers that), so a line logged just before an
 * exit is kept; a reader that stops reading costs at most MAX_PENDING_BYTES, later lines are dropped; a reader
 * that goes away (EPIPE) ends logging, not the process. Measured side by side on the mapping role (GET list, CPU
 * per request at info): synchronous writes 76-79 µs, this 45-52 µs, pino's worker-thread transport 37-60 µs; the
 * worker was not kept: it dies on EPIPE with an unhandled error, inherits flags such as --input-type that a
 * worker cannot start with, and costs the start a thread.
 */
function asyncStdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100, maxLength: MAX_PENDING_BYTES });
}

/** The destinations that print readable lines (createLogger's pretty format): an access line gets its path there. */
const PRETTY_DESTINATIONS = new WeakSet<object>();

/** Fields of an access record that its readable line shows in place (the rest are shown as name=value). */
const ACCESS_FIELDS = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'name',
  'role',
  'requestId',
  'method',
  'operationId',
  'path',
  'status',
  'ms',
  'msg',
]);

/** A path as a terminal line may show it: no query (it can hold a token), no control characters, at most 200 characters. */
function printablePath(path: string): string {
  return printableText(path.split('?')[0]!);
}

/** Text as a terminal line may show it: no control characters (C0, DEL, C1), at most 200 characters. */
function printableText(text: string): string {
  const bare = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return bare.length > 200 ? `${bare.slice(0, 199)}…` : bare;
}

/**
 * The readable text of an access record: `mapping GET /api/vessels 200 1.25 ms id=Xb...-0`, then its other
 * fields (a gateway's pool member, a cut answer) as name=value.
 *
 * @example
 * accessText({ role: 'mapping', method: 'GET', path: '/api/x', status: 404, ms: 0.8, requestId: 'r1', msg: 'request' })
 * // 'mapping GET /api/x 404 0.8 ms id=r1'
 */
export function accessText(record: Readonly<Record<string, unknown>>): string {
  const where =
    typeof record.path === 'string' ? printablePath(record.path) : typeof record.operationId === 'string' ? `(${record.operationId})` : '';
  const words = [record.role, record.method ?? '-', where, record.status, `${String(record.ms)} ms`, `id=${String(record.requestId)}`];
  for (const [name, value] of Object.entries(record)) {
    // Extra fields may hold request text (a page's path): the same cleaning as the path.
    if (!ACCESS_FIELDS.has(name)) words.push(`${name}=${printableText(typeof value === 'string' ? value : JSON.stringify(value))}`);
  }
  return words.filter((word) => word !== undefined && word !== '').join(' ');
}

const isAccessRecord = (record: Record<string, unknown>) =>
  record.msg === 'request' && typeof record.status === 'number' && typeof record.requestId === 'string';

/**
 * pino-pretty's readable lines, one line a record: an access record as its `accessText`, any other as its
 * message then its fields on the same line. Written synchronously in this thread (no transport worker), so a
 * line logged just before an exit is not lost; pino-pretty is loaded only here (a JSON start does not pay for it).
 */
function prettyDestination(colorize: boolean, out: DestinationStream): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as { prettyFactory: typeof PrettyFactory };
  const pretty = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', singleLine: true });
  const destination = {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(pretty(isAccessRecord(record) ? { level: record.level, time: record.time, msg: accessText(record) } : record));
    },
  };
  PRETTY_DESTINATIONS.add(destination);
  return destination;
}

/**
 * The process logger, created once in the composition root; credentials are redacted in either format.
 * JSON: one object per line, written asynchronously (asyncStdout). Pretty: one readable line per record,
 * written synchronously (prettyDestination).
 *
 * @example
 * const logger = createLogger({ level: 'info', format: 'auto' }); // pretty on a terminal, JSON lines otherwise
 */
export function createLogger(options: LoggerOptions): Logger {
  const terminal = options.isTerminal ?? process.stdout.isTTY === true;
  const pretty = options.format === 'pretty' || (options.format === 'auto' && terminal);
  const destination = pretty
    ? prettyDestination(terminal, options.destination ?? pino.destination({ dest: 1, sync: true }))
    : (options.destination ?? (options.level === 'silent' ? undefined : asyncStdout()));
  return pino(
    { level: options.level, name: options.name ?? 'portolan', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination,
  );
}

/** The fields of one access line; `extra` holds only names and numbers (a member, a page): never a credential. */
export type AccessFields = {
  requestId: string;
  method: string | undefined;
  /** The request's path: shown on a readable (pretty) line only; JSON lines keep their shape without it. */
  path?: string | undefined;
  operationId: string | undefined;
  status: number;
  ms: number;
  extra?: Readonly<Record<string, unknown>> | undefined;
};

/**
 * The one line per request, written where `logger` writes, in the very shape pino gives it (level, time, the
 * logger's bindings, the fields, `msg: "request"`), but composed directly: no redaction pass (its fields hold
 * no credential) and no generic serialisation, about 1 µs a line instead of pino's ~4 µs.
 *
 * @example
 * const access = accessLogger(log);
 * if (access.enabled('info')) access.write('info', { requestId, method: 'GET', operationId: 'listVessels', status: 200, ms: 0.4 });
 */
export function accessLogger(logger: Logger) {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const levels = logger.levels.values;
  const withPath = PRETTY_DESTINATIONS.has(stream);
  return {
    enabled: (level: 'info' | 'debug') => logger.isLevelEnabled(level),
    write(level: 'info' | 'debug', fields: AccessFields): void {
      let line = `{"level":${levels[level]},"time":${Date.now()}${bindings},"requestId":${JSON.stringify(fields.requestId)}`;
      if (fields.method !== undefined) line += `,"method":${JSON.stringify(fields.method)}`;
      if (withPath && fields.path !== undefined) line += `,"path":${JSON.stringify(fields.path)}`;
      if (fields.operationId !== undefined) line += `,"operationId":${JSON.stringify(fields.operationId)}`;
      line += `,"status":${fields.status},"ms":${fields.ms}`;
      if (fields.extra) for (const name in fields.extra) line += `,${JSON.stringify(name)}:${JSON.stringify(fields.extra[name]) ?? 'null'}`;
      stream.write(`${line},"msg":"request"}\n`);
    },
  };
}
