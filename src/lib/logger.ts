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
