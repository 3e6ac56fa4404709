// Prism's logger for the in-process mocks: a pino logger whose JSON lines become one callback per entry.
import pino, { type Logger } from 'pino';

/** The levels a mock run may log at: `error` (default: failed requests and spec violations) or `warn`. */
export type PrismLogLevel = 'error' | 'warn';

/** One entry of Prism's log: its level name, the Prism part that wrote it (`HTTP SERVER`, `VALIDATOR`, ...) and its message. */
export type PrismLogEntry = { level: string; name: string; message: string };

/** The level numbers Prism uses: pino's, plus `success` (info + 2), which Prism's own logger adds. */
const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 32: 'success', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * A logger to hand Prism (`components.logger`): entries at `level` and above reach `onEntry`, below it
 * they are never formatted. Prism logs every request at info and its violations at warn/error, so
 * `error` keeps real failures visible without the per-request noise.
 *
 * @example
 * const logger = createPrismLogger('error', (e) => console.error(`${e.level} ${e.message}`));
 */
export function createPrismLogger(level: PrismLogLevel, onEntry: (entry: PrismLogEntry) => void): Logger<'success'> {
  const destination = {
    write(line: string) {
      const entry = JSON.parse(line) as { level: number; name?: string; msg?: string };
      onEntry({ level: LEVEL_NAMES[entry.level] ?? String(entry.level), name: entry.name ?? 'PRISM', message: entry.msg ?? '' });
    },
  };
  return pino({ level, base: {}, timestamp: false, customLevels: { success: 32 } }, destination);
}
