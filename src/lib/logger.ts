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
 * Standard output written asynchronously (pino's sonic-boom): a line is handed to the kernel later, together
 * with the lines logged meanwhile (4 KB or 100 ms at most), so a request never waits on a write(2) of its access line
 * (one synchronous write per line cost the mapping role ~40 % of its throughput). Whatever is pending is
 * written synchronously when the process exits (pino registers that), so a fatal line before an exit is kept.
 */
function asyncStdout(): DestinationStream {
  return pino.destination({
    dest: 1,
    sync: false,
    // Lines leave in writes of 4 KB or more, and at least every 100 ms (a quiet process's line waits no longer).
    minLength: 4096,
    periodicFlush: 100,
    maxLength: MAX_PENDING_BYTES,
  });
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

/**
 * A logger writing where `logger` writes, at its level and with its bindings, that redacts nothing: for a line
 * whose fields are all known to hold no credential (the adapter's access line: id, method, operation, status,
 * time, member), where matching the redaction paths is the costliest part of the line.
 */
export function unredacted(logger: Logger): Logger {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: logger.level }, stream).child(logger.bindings());
}
