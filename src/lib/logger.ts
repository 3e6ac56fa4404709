import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';

export type Logger = PinoLogger;

/** Every place a credential, token or secret can sit in a log record; pino replaces them. */
export const REDACTED_PATHS = [
  'password', '*.password', 'passwd', '*.passwd', 'secret', '*.secret', 'client_secret', '*.client_secret',
  'clientSecret', '*.clientSecret', 'token', '*.token', 'id_token', '*.id_token',
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-vendor-auth-token"]',
  'res.headers["set-cookie"]', 'headers.authorization', 'headers.cookie', 'headers["x-vendor-auth-token"]',
];

export type LoggerOptions = { level: string; name?: string; destination?: DestinationStream };

/** The process logger: JSON lines, credentials redacted. Created once in the composition root. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    { level: options.level, name: options.name ?? 'portolan', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    options.destination,
  );
}
