import t from 'tap';
import { createPrismLogger, type PrismLogEntry } from './prism-log.ts';

/** Logs as Prism does (a named child, every level it uses) and returns what reached the callback. */
function logAll(level: 'error' | 'warn'): PrismLogEntry[] {
  const entries: PrismLogEntry[] = [];
  const logger = createPrismLogger(level, (entry) => entries.push(entry)).child({ name: 'VALIDATOR' });
  logger.debug('debug');
  logger.info('Request received');
  logger.success('Responding with the requested status code 200');
  logger.warn('Violation: request.header Unknown header');
  logger.error('Request terminated with error: NO_PATH_MATCHED_ERROR');
  return entries;
}

t.test('at error, only error entries come through: no per-request noise, real failures kept', async (t) => {
  t.same(logAll('error'), [{ level: 'error', name: 'VALIDATOR', message: 'Request terminated with error: NO_PATH_MATCHED_ERROR' }]);
});

t.test('at warn, warnings come through too', async (t) => {
  t.same(
    logAll('warn').map((e) => e.level),
    ['warn', 'error'],
  );
});
