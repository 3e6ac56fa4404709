import type { Database } from '../../stores/database.ts';

/**
 * The device pair's active lease: one row (`device_active_lease`, migrations.ts) that names the process
 * serving the data plane and running deployments, the URL it is reached on, until when it holds it, and a
 * generation that goes up at every change of holder (the fencing token of a holder's writes).
 */
export type ActiveLease = { holder: string; url: string; generation: number; expiresMs: number };

/** This process's hold of the lease: what its writes are fenced by. */
export type LeaseHold = { holder: string; generation: number };

const ROW = `id = 'device'`;

/** The lease row on the SQL port; every change is one conditional statement (atomic on both engines). */
export function createLeaseStore(db: Database) {
  return {
    /** Who holds the lease, or undefined when nobody does (never taken, or released). */
    async read(): Promise<ActiveLease | undefined> {
      const [row] = await db.query(`SELECT holder, url, generation, expires_ms FROM device_active_lease WHERE ${ROW}`);
      if (!row || row.holder === null) return undefined;
      return { holder: String(row.holder), url: String(row.url), generation: Number(row.generation), expiresMs: Number(row.expires_ms) };
    },

    /**
     * Takes the lease when nobody holds it or it lapsed by `nowMs` (or, with `fromGeneration`, from a holder
     * known to be gone); the new generation, or undefined when another holds it.
     */
    async take(holder: string, url: string, nowMs: number, untilMs: number, fromGeneration?: number): Promise<number | undefined> {
      const free = fromGeneration === undefined ? '' : ` OR generation = $5`;
      const params = [holder, url, untilMs, nowMs, ...(fromGeneration === undefined ? [] : [fromGeneration])];
      return db.transaction(async (tx) => {
        const { rowCount } = await tx.execute(
          `UPDATE device_active_lease SET holder = $1, url = $2, generation = generation + 1, expires_ms = $3
           WHERE ${ROW} AND (holder IS NULL OR expires_ms <= $4${free})`,
          params,
        );
        if (rowCount === 0) return undefined;
        const [row] = await tx.query(`SELECT generation FROM device_active_lease WHERE ${ROW}`);
        return Number(row!.generation);
      });
    },

    /** Extends this holder's lease; false when it is no longer this holder's (another took it). */
    async renew(hold: LeaseHold, url: string, untilMs: number): Promise<boolean> {
      const { rowCount } = await db.execute(
        `UPDATE device_active_lease SET expires_ms = $3, url = $4 WHERE ${ROW} AND holder = $1 AND generation = $2`,
        [hold.holder, hold.generation, untilMs, url],
      );
      return rowCount === 1;
    },

    /** Gives the lease up (a graceful stop): the other process takes it at its next look, not after expiry. */
    async release(hold: LeaseHold): Promise<void> {
      await db.execute(`UPDATE device_active_lease SET holder = NULL, expires_ms = 0 WHERE ${ROW} AND holder = $1 AND generation = $2`, [
        hold.holder,
        hold.generation,
      ]);
    },
  };
}

export type LeaseStore = ReturnType<typeof createLeaseStore>;

/** Thrown by a fenced write of a process that no longer holds the active lease: nothing of it was written. */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
  constructor() {
    super('this device process no longer holds the active lease; the write was not made');
  }
}

/**
 * Fences a write: inside the writer's transaction `tx`, checks that `hold` still holds the lease, and keeps
 * the row from changing hands until the transaction ends (PostgreSQL: a share lock; SQLite: the
 * transaction is the only writer already). Throws LeaseLost otherwise, which rolls the transaction back.
 */
export async function fenceWrite(tx: Database, hold: LeaseHold | undefined): Promise<void> {
  if (!hold) throw new LeaseLost();
  const lock = tx.engine === 'postgres' ? ' FOR SHARE' : '';
  const rows = await tx.query(`SELECT 1 AS held FROM device_active_lease WHERE ${ROW} AND holder = $1 AND generation = $2${lock}`, [
    hold.holder,
    hold.generation,
  ]);
  if (rows.length === 0) throw new LeaseLost();
}
