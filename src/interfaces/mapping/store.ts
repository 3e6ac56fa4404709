import type { Hazard, JournalEntry, Resource, VesselDetailed } from '../../../generated/mapping/types.gen.ts';
import { toBoolean, type Database, type Row } from '../../stores/database.ts';
import type { ChartRecord } from './charts.ts';

/** A survey record as the store keeps it: at hand once read (no promise to wait for), until then a promise. */
export type Kept<T> = T | Promise<T>;

/** The mapping application's storage port. */
export interface MappingStore {
  createChart(chart: ChartRecord): Promise<void>;
  getChart(id: string): Promise<ChartRecord | undefined>;
  /** Every chart, oldest first. */
  listCharts(): Promise<ChartRecord[]>;
  /** Every vessel's basic fields (id, type, crew, status), in survey order. */
  listVesselSummaries(): Kept<Pick<VesselDetailed, 'id' | 'type' | 'crew' | 'status'>[]>;
  getVessel(id: string): Kept<VesselDetailed | undefined>;
  listHazards(): Kept<Hazard[]>;
  listJournalEntries(): Kept<JournalEntry[]>;
  listResources(): Promise<Resource[]>;
  createResource(resource: Resource): Promise<void>;
}

/** Drops SQL NULLs: optional fields are absent, never null, on the wire. */
function present<T extends object>(row: Row): T {
  // A plain loop: this runs for every row of every list answer (the hot path of GET /api/vessels).
  const record: Record<string, unknown> = {};
  for (const key in row) {
    const value = row[key];
    if (value !== null && key !== 'seq') record[key] = value;
  }
  return record as T;
}

/** `present`, with the named integer columns as numbers (PostgreSQL may return them as strings). */
const numeric = <T extends object>(row: Row, ...keys: (keyof T & string)[]): T => {
  const record = present<T>(row) as Record<string, unknown>;
  for (const key of keys) if (record[key] !== undefined) record[key] = Number(record[key]);
  return record as T;
};

/** SQLite reads booleans back as 0/1. */
function toChartRecord(row: Row): ChartRecord {
  const record = numeric<ChartRecord>(row, 'landmarks');
  if (record.completed !== undefined) record.completed = toBoolean(record.completed);
  return record;
}

/**
 * The MappingStore on the SQL port: the same statements on SQLite and PostgreSQL.
 *
 * Vessels, hazards and the journal are the survey's records: migrations write them and no operation of
 * the interface changes them, so they are read once and kept (the answers of GET /api/vessels and its
 * kin cost no query). A failed read is not kept: the next request reads again. Charts and resources,
 * which the interface creates, are always read from the store.
 */
export function createSqlMappingStore(db: Database): MappingStore {
  // Read on first use and kept: the value itself once read, so an answer about it waits for nothing.
  const once = <T>(read: () => Promise<T>) => {
    let kept: { value: T } | undefined;
    let reading: Promise<T> | undefined;
    return (): Kept<T> => {
      if (kept) return kept.value;
      reading ??= read().then(
        (value) => {
          kept = { value };
          return value;
        },
        (error: unknown) => {
          reading = undefined;
          throw error;
        },
      );
      return reading;
    };
  };
  const vessels = once(async () =>
    (await db.query('SELECT * FROM mapping_vessels ORDER BY seq')).map((r) => numeric<VesselDetailed>(r, 'crew')),
  );
  const vesselSummaries = once(async () => (await vessels()).map(({ id, type, crew, status }) => ({ id, type, crew, status })));
  const vesselsById = once(async () => new Map((await vessels()).map((v) => [v.id, v])));
  const hazards = once(async () => (await db.query('SELECT * FROM mapping_hazards ORDER BY seq')).map((r) => present<Hazard>(r)));
  const journal = once(async () =>
    (await db.query('SELECT * FROM mapping_journal ORDER BY date, seq')).map((r) => present<JournalEntry>(r)),
  );
  return {
    async createChart(chart) {
      await db.execute(
        'INSERT INTO mapping_charts (id, name, completed, date, landmarks, risk_level) VALUES ($1, $2, $3, $4, $5, $6)',
        [chart.id, chart.name, chart.completed ?? null, chart.date ?? null, chart.landmarks ?? null, chart.risk_level ?? null],
        // Independent inserts: committed with the others of this turn (each answered 201 after that commit).
        { grouped: true },
      );
    },
    async getChart(id) {
      const [row] = await db.query('SELECT id, name, completed, date, landmarks, risk_level FROM mapping_charts WHERE id = $1', [id]);
      return row ? toChartRecord(row) : undefined;
    },
    async listCharts() {
      return (await db.query('SELECT id, name, completed, date, landmarks, risk_level FROM mapping_charts ORDER BY seq')).map(
        toChartRecord,
      );
    },
    listVesselSummaries: vesselSummaries,
    getVessel(id) {
      const byId = vesselsById();
      return byId instanceof Promise ? byId.then((found) => found.get(id)) : byId.get(id);
    },
    listHazards: hazards,
    listJournalEntries: journal,
    async listResources() {
      return (await db.query('SELECT * FROM mapping_resources ORDER BY seq')).map((r) => numeric<Resource>(r, 'quantity'));
    },
    async createResource(resource) {
      await db.execute('INSERT INTO mapping_resources (id, name, category, quantity, unit, vessel) VALUES ($1, $2, $3, $4, $5, $6)', [
        resource.id,
        resource.name,
        resource.category,
        resource.quantity,
        resource.unit,
        resource.vessel ?? null,
      ]);
    },
  };
}
