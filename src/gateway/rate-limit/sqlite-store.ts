import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { CounterRule, CounterStore, HitResult } from './counter-store.ts';

export type SqliteStoreOptions = {
  /** The database file; created with its directory when missing. May be the main database's file. */
  path: string;
  /** How long a hit waits for another process's write lock before failing (default 1000 ms). */
  busyTimeoutMs?: number;
  /** Expired rows are deleted once every this many hits (default 1000). */
  sweepEveryHits?: number;
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limit_counter (
  key TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  counted INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rate_limit_counter_expiry ON rate_limit_counter (expires_at_ms);`;

// One statement per hit, atomic under SQLite's single-writer lock: start a window when there is no
// live entry, count one more below the limit, leave a limited entry alone. SET expressions all read
// the row as it was, and RETURNING sees only the row as it is now, so whether this hit was counted
// is kept in the row (`counted`) for RETURNING to report.
const HIT = `
INSERT INTO rate_limit_counter (key, count, expires_at_ms, counted) VALUES (:key, 1, :now + :window, 1)
ON CONFLICT (key) DO UPDATE SET
  count = CASE WHEN expires_at_ms <= :now THEN 1 WHEN count < :limit THEN count + 1 ELSE count END,
  expires_at_ms = CASE WHEN expires_at_ms <= :now THEN :now + :window ELSE expires_at_ms END,
  counted = (expires_at_ms <= :now OR count < :limit)
RETURNING count, expires_at_ms, counted`;

const PEEK = 'SELECT count, expires_at_ms FROM rate_limit_counter WHERE key = :key AND expires_at_ms > :now';
// At most as many rows as hits since the last sweep (every new key took at least one hit), so a sweep
// keeps up with new keys yet never holds the write lock long, however many rows expired at once.
const SWEEP = `
DELETE FROM rate_limit_counter WHERE key IN (
  SELECT key FROM rate_limit_counter WHERE expires_at_ms <= :now ORDER BY expires_at_ms LIMIT :batch
)`;

type Row = { count: number; expires_at_ms: number; counted?: number };

/**
 * Counters in a SQLite file that several processes on one machine share: WAL (readers never wait),
 * a busy timeout (writers queue for the lock), one UPSERT ... RETURNING per hit, the hits of one event-loop
 * turn in one transaction (a group commit). node:sqlite is
 * synchronous, so a hit holds this process's event loop while it waits for the lock (bounded by
 * `busyTimeoutMs`); the counter table is one small row per token, so the lock is held for microseconds.
 *
 * @example
 * const store = createSqliteStore({ path: './data/rate-limit.db' });
 */
export function createSqliteStore(options: SqliteStoreOptions): CounterStore {
  const file = resolve(options.path);
  const sweepEvery = options.sweepEveryHits ?? 1000;
  mkdirSync(dirname(file), { recursive: true });
  const db = new DatabaseSync(file, { timeout: options.busyTimeoutMs ?? 1000 });
  try {
    // NORMAL sync is safe with WAL (at worst the last commits are lost on power failure) and far faster.
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; ${SCHEMA}`);
  } catch (error) {
    db.close();
    throw error;
  }
  const hit = db.prepare(HIT);
  const peek = db.prepare(PEEK);
  const sweep = db.prepare(SWEEP);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  let hitsSinceSweep = 0;

  // Group commit: the hits of one turn of the event loop (the requests read from every socket in one poll)
  // run in one transaction, after that turn's I/O; each is answered only once the transaction is committed.
  // Each hit is still one atomic UPSERT under the write lock, in arrival order, so counts stay exact across
  // processes; one lock and one WAL commit per batch instead of per hit.
  type Pending = { key: string; nowMs: number; rule: CounterRule; resolve(result: HitResult): void; reject(error: unknown): void };
  let batch: Pending[] = [];
  const flush = () => {
    const hits = batch;
    batch = [];
    const results: HitResult[] = [];
    try {
      begin.run();
      try {
        for (const pending of hits) {
          const { key, nowMs, rule } = pending;
          if (++hitsSinceSweep >= sweepEvery) {
            hitsSinceSweep = 0;
            sweep.run({ now: nowMs, batch: sweepEvery });
          }
          const row = hit.get({ key, now: nowMs, window: rule.windowMs, limit: rule.limit }) as Row;
          results.push({ counted: row.counted === 1, count: Math.min(row.count, rule.limit), expiresAtMs: row.expires_at_ms });
        }
        commit.run();
      } catch (error) {
        if (db.isTransaction) rollback.run();
        throw error;
      }
    } catch (error) {
      for (const pending of hits) pending.reject(error);
      return;
    }
    for (let i = 0; i < hits.length; i++) hits[i]!.resolve(results[i]!);
  };

  return {
    name: 'sqlite',
    hit: (key, nowMs, rule) =>
      new Promise<HitResult>((resolve, reject) => {
        if (batch.push({ key, nowMs, rule, resolve, reject }) === 1) setImmediate(flush);
      }),
    peek: async (key, nowMs) => {
      const row = peek.get({ key, now: nowMs }) as Row | undefined;
      return row && { count: row.count, expiresAtMs: row.expires_at_ms };
    },
    ping: async () => {
      try {
        db.prepare('SELECT 1').get();
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
    },
    close: async () => {
      // Hits already taken are counted before the file closes (their scheduled flush then finds none).
      if (batch.length > 0 && db.isOpen) flush();
      if (db.isOpen) db.close();
    },
  };
}
