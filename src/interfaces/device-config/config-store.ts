import { isDatabaseError } from '../../stores/database-error.ts';
import type { Database } from '../../stores/database.ts';
import { defaultDbValues, type DbValues, type DbVariableName } from './db-variables.ts';

export type RuleRecord = { partition: string; name: string; apiAnonymous: string; generation: number };

/** The configuration REST's own objects: script objects and system database variables. */
export interface DeviceConfigStore {
  listRules(): Promise<RuleRecord[]>;
  getRule(partition: string, name: string): Promise<RuleRecord | undefined>;
  /** `exists` when the partition already has a script object of that name (two racing creates: one wins). */
  createRule(partition: string, name: string, apiAnonymous: string): Promise<RuleRecord | 'exists'>;
  /** The new text, generation one up; undefined when there is no such object. */
  updateRule(partition: string, name: string, apiAnonymous: string): Promise<RuleRecord | undefined>;
  deleteRule(partition: string, name: string): Promise<boolean>;
  /** Every variable's value (defaults for those never set) and generation. */
  dbVariables(): Promise<{ values: DbValues; generations: Readonly<Record<DbVariableName, number>> }>;
  /** Saves a value; its generation goes up by one. */
  setDbVariable(name: DbVariableName, value: string): Promise<number>;
}

const toRule = (row: Record<string, unknown>): RuleRecord => ({
  partition: String(row.partition),
  name: String(row.name),
  apiAnonymous: String(row.api_anonymous),
  generation: Number(row.generation),
});

export function createSqlDeviceConfigStore(db: Database): DeviceConfigStore {
  return {
    async listRules() {
      return (await db.query('SELECT partition, name, api_anonymous, generation FROM device_rules ORDER BY partition, name')).map(toRule);
    },
    async getRule(partition, name) {
      const rows = await db.query(
        'SELECT partition, name, api_anonymous, generation FROM device_rules WHERE partition = $1 AND name = $2',
        [partition, name],
      );
      return rows[0] ? toRule(rows[0]) : undefined;
    },
    async createRule(partition, name, apiAnonymous) {
      try {
        await db.execute('INSERT INTO device_rules (partition, name, api_anonymous, generation) VALUES ($1, $2, $3, 1)', [
          partition,
          name,
          apiAnonymous,
        ]);
      } catch (error) {
        if (isDatabaseError(error, 'unique-violation')) return 'exists';
        throw error;
      }
      return { partition, name, apiAnonymous, generation: 1 };
    },
    async updateRule(partition, name, apiAnonymous) {
      const rows = await db.query(
        'UPDATE device_rules SET api_anonymous = $3, generation = generation + 1 WHERE partition = $1 AND name = $2 RETURNING partition, name, api_anonymous, generation',
        [partition, name, apiAnonymous],
      );
      return rows[0] ? toRule(rows[0]) : undefined;
    },
    async deleteRule(partition, name) {
      return (await db.execute('DELETE FROM device_rules WHERE partition = $1 AND name = $2', [partition, name])).rowCount > 0;
    },
    async dbVariables() {
      const values: Record<string, string> = { ...defaultDbValues() };
      const generations: Record<string, number> = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
      for (const row of await db.query('SELECT name, value, generation FROM device_db_variables')) {
        if (!Object.hasOwn(values, String(row.name))) continue;
        values[String(row.name)] = String(row.value);
        generations[String(row.name)] = Number(row.generation);
      }
      return { values: values as DbValues, generations: generations as Record<DbVariableName, number> };
    },
    async setDbVariable(name, value) {
      const rows = await db.query(
        `INSERT INTO device_db_variables (name, value, generation) VALUES ($1, $2, 2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, generation = device_db_variables.generation + 1
         RETURNING generation`,
        [name, value],
      );
      return Number(rows[0]!.generation);
    },
  };
}
