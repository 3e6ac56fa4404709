/** Where the counters live, decoded from the one store setting. */
export type StoreLocation = { kind: 'memory' } | { kind: 'sqlite'; path: string } | { kind: 'redis'; url: string };

/**
 * Decodes the store setting: `memory`, `sqlite:<file>` (a path, relative to the working directory)
 * or `redis://[user:password@]host[:port][/db]` (`rediss://` for TLS). Returns an error message, never
 * the value itself (a Redis URL may carry a password), when the setting is none of these.
 *
 * @example
 * parseStoreUrl('sqlite:./data/rate-limit.db'); // { kind: 'sqlite', path: './data/rate-limit.db' }
 */
export function parseStoreUrl(value: string): StoreLocation | { error: string } {
  const expected = 'expected memory, sqlite:<file> or redis://host:port[/db]';
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    return path ? { kind: 'sqlite', path } : { error: `rate-limit store: sqlite: needs a file name (${expected})` };
  }
  if (/^rediss?:\/\//.test(value)) {
    const url = URL.parse(value);
    if (url === null || url.hostname === '') return { error: `rate-limit store: not a valid Redis URL (${expected})` };
    const db = url.pathname.replace(/^\//, '');
    if (db !== '' && !/^\d+$/.test(db)) return { error: 'rate-limit store: the Redis database must be a number (redis://host:port/<db>)' };
    return { kind: 'redis', url: value };
  }
  return { error: `rate-limit store: unknown store (${expected})` };
}
