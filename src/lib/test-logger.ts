import { Writable } from 'node:stream';
import { createLogger, type Logger } from './logger.ts';

/**
 * Test helper: a logger like the production one (redaction on) that writes its JSON lines into memory,
 * so a test can read what would have been logged.
 *
 * @example
 * const log = captureLogs();
 * await startTestSystem(t, { logger: log.logger });
 * t.notMatch(log.text(), password);
 */
export function captureLogs(level = 'debug'): { logger: Logger; lines: string[]; text(): string } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines, text: () => lines.join('\n') };
}
