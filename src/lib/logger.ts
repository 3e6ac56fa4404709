import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import type { PinoPretty as PinoPrettyFactory } from 'pino-pretty';

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
 * Standard output written by a worker thread (pino's transport, `pino/file` on fd 1): this thread only copies
 * a line into a shared buffer, the worker turns it into write(2)s of the lines logged meanwhile, so a request
 * never waits on a write of its access line (one synchronous write per line cost the mapping role ~40 % of
 * its throughput; sonic-boom's writes from this thread still ~10 % of the gateway's CPU). Whatever is pending
 * is written before the process exits (pino flushes the transport on exit), so a line logged just before an
 * exit is kept.
 */
function workerStdout(): DestinationStream {
  // The worker writes asynchronously: a reader that stops reading stdout costs it at most MAX_PENDING_BYTES of
  // lines, later ones are dropped; this thread never waits.
  return pino.transport({ target: 'pino/file', options: { destination: 1, maxLength: MAX_PENDING_BYTES } }) as DestinationStream;
}

/**
 * The process logger, created once in the composition root; credentials are redacted in either format.
 * Pretty lines are written synchronously in this thread (no transport worker), so a line logged just
 * before an exit is not lost; pino-pretty is loaded only then (it costs a JSON start ~17 ms otherwise).
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.format === 'pretty' || (options.format === 'auto' && (options.isTerminal ?? process.stdout.isTTY === true));
  const destination = pretty
    ? (createRequire(import.meta.url)('pino-pretty') as { PinoPretty: typeof PinoPrettyFactory }).PinoPretty({
        sync: true,
        colorize: options.isTerminal ?? process.stdout.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,name',
        ...(options.destination ? { destination: options.destination } : {}),
      })
    : (options.destination ?? (options.level === 'silent' ? undefined : workerStdout()));
  return pino(
    { level: options.level, name: options.name ?? 'portolan', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination,
  );
}

/** The fields of one access line; `extra` holds only names and numbers (a member, a page): never a credential. */
export type AccessFields = {
  requestId: string;
  method: string | undefined;
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
  return {
    enabled: (level: 'info' | 'debug') => logger.isLevelEnabled(level),
    write(level: 'info' | 'debug', fields: AccessFields): void {
      let line = `{"level":${levels[level]},"time":${Date.now()}${bindings},"requestId":${JSON.stringify(fields.requestId)}`;
      if (fields.method !== undefined) line += `,"method":${JSON.stringify(fields.method)}`;
      if (fields.operationId !== undefined) line += `,"operationId":${JSON.stringify(fields.operationId)}`;
      line += `,"status":${fields.status},"ms":${fields.ms}`;
      if (fields.extra) for (const name in fields.extra) line += `,${JSON.stringify(name)}:${JSON.stringify(fields.extra[name]) ?? 'null'}`;
      stream.write(`${line},"msg":"request"}\n`);
    },
  };
}
