import type { Database, Row } from '../../stores/database.ts';
import type { SessionVariables } from './variables.ts';

/** One access session as stored: times in epoch milliseconds. */
export type AccessSessionRecord = {
  id: string;
  createdMs: number;
  expiresMs: number;
  variables: SessionVariables;
};

/**
 * The access sessions' storage port. A session whose `expiresMs` is at or before `nowMs` is gone for
 * every method (whether or not its row has been swept yet).
 */
export interface AccessSessionStore {
  create(session: AccessSessionRecord): Promise<void>;
  /** The live session, or undefined when unknown or expired. */
  get(id: string, nowMs: number): Promise<AccessSessionRecord | undefined>;
  /** Sets `variables` on a live session (overwriting those names, keeping the others); undefined when it is gone. */
  setVariables(id: string, nowMs: number, variables: SessionVariables): Promise<AccessSessionRecord | undefined>;
  /** Removes a live session; false when it was unknown or expired. */
  delete(id: string, nowMs: number): Promise<boolean>;
  /** Removes every expired session's row; returns how many. */
  deleteExpired(nowMs: number): Promise<number>;
}

const COLUMNS = 'id, created_ms, expires_ms, variables';
const LIVE = 'id = $1 AND expires_ms > $2';

const toRecord = (row: Row): AccessSessionRecord => ({
  id: String(row.id),
  createdMs: Number(row.created_ms),
  expiresMs: Number(row.expires_ms),
  // JSON.parse keeps a `__proto__` member as an own property, never as the prototype.
  variables: JSON.parse(String(row.variables)) as SessionVariables,
});

/** The AccessSessionStore on the SQL port: the same statements on SQLite and PostgreSQL. */
export function createSqlAccessSessionStore(db: Database): AccessSessionStore {
  return {
    async create(session) {
      await db.execute(`INSERT INTO access_sessions (${COLUMNS}) VALUES ($1, $2, $3, $4)`, [
        session.id,
        session.createdMs,
        session.expiresMs,
        JSON.stringify(session.variables),
      ]);
    },
    async get(id, nowMs) {
      const [row] = await db.query(`SELECT ${COLUMNS} FROM access_sessions WHERE ${LIVE}`, [id, nowMs]);
      return row ? toRecord(row) : undefined;
    },
    async setVariables(id, nowMs, variables) {
      // Read, merge and write in one transaction, so concurrent writers never lose each other's names.
      return db.transaction(async (tx) => {
        const [row] = await tx.query(`SELECT ${COLUMNS} FROM access_sessions WHERE ${LIVE}`, [id, nowMs]);
        if (!row) return undefined;
        const record = toRecord(row);
        const merged = Object.fromEntries([...Object.entries(record.variables), ...Object.entries(variables)]);
        await tx.execute('UPDATE access_sessions SET variables = $1 WHERE id = $2', [JSON.stringify(merged), id]);
        return { ...record, variables: merged };
      });
    },
    async delete(id, nowMs) {
      return (await db.execute(`DELETE FROM access_sessions WHERE ${LIVE}`, [id, nowMs])).rowCount > 0;
    },
    async deleteExpired(nowMs) {
      return (await db.execute('DELETE FROM access_sessions WHERE expires_ms <= $1', [nowMs])).rowCount;
    },
  };
}
