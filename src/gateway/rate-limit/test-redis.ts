// Test helper: the Redis server the rate-limit suites use, or a visible skip when none answers.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TapTest } from '../../lib/tap-test.ts';

/** Overrides the server the Redis tests use. */
export const TEST_REDIS_ENV = 'PORTOLAN_TEST_REDIS_URL';
const DEFAULT_SERVER = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 2_000;

let server: Promise<{ url: string } | { reason: string }> | undefined;

/**
 * The URL of the test Redis server. When no server answers, records a visible SKIP on `t` with the
 * reason and returns undefined: the caller then returns without asserting anything.
 *
 * @example
 * t.test('counts on Redis', async (t) => {
 *   const url = await withTestRedis(t);
 *   if (!url) return;
 *   const prefix = withTestKeyPrefix(t, url); // keys deleted when t ends
 * });
 */
export async function withTestRedis(t: TapTest): Promise<string | undefined> {
  const found = await (server ??= probe(process.env[TEST_REDIS_ENV] || DEFAULT_SERVER));
  if ('reason' in found) {
    t.skip(`Redis suites skipped: no server answers at ${serverLabel()} (${found.reason})`, () => undefined);
    return undefined;
  }
  return found.url;
}

/** A key prefix of this test alone (`portolan-test:<random>:`); every key under it is deleted when `t` ends. */
export function withTestKeyPrefix(t: TapTest, url: string): string {
  const prefix = `portolan-test:${randomBytes(6).toString('hex')}:`;
  t.teardown(async () => {
    const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      for await (const keys of client.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
        if (keys.length > 0) await client.unlink(...keys);
      }
    } finally {
      client.disconnect();
    }
  });
  return prefix;
}

/** Where the tests look for a server: host and port only (the URL may carry a password). */
const serverLabel = (): string => {
  const url = URL.parse(process.env[TEST_REDIS_ENV] || DEFAULT_SERVER);
  return url ? `${url.hostname}:${url.port || 6379}` : `the ${TEST_REDIS_ENV} setting (not a valid URL)`;
};

async function probe(url: string): Promise<{ url: string } | { reason: string }> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // connect() only says "Connection is closed."; the error event has the cause (ECONNREFUSED, ...).
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
    return { url };
  } catch (error) {
    return { reason: (cause ?? (error instanceof Error ? error : new Error(String(error)))).message };
  } finally {
    client.disconnect();
  }
}
