import type { Hazard, JournalEntry, Resource, VesselDetailed } from '../../../generated/mapping/types.gen.ts';
import { toBoolean, type Database, type Row } from '../../stores/database.ts';
import type { ChartRecord } from './charts.ts';

/** The mapping application's storage port. */
export interface MappingStore {
  createChart(chart: ChartRecord): Promise<void>;
  getChart(id: string): Promise<ChartRecord | undefined>;
  /** Every chart, oldest first. */
  listCharts(): Promise<ChartRecord[]>;
  listVessels(): Promise<VesselDetailed[]>;
  getVessel(id: string): Promise<VesselDetailed | undefined>;
  listHazards(): Promise<Hazard[]>;
  listJournalEntries(): Promise<JournalEntry[]>;
  listResources(): Promise<Resource[]>;
  createResource(resource: Resource): Promise<void>;
}

/** Drops SQL NULLs: optional fields are absent, never null, on the wire. */
function present<T extends object>(row: Row): T {
  return Object.fromEntries(Object.entries(row).filter(([key, v]) => v !== null && key !== 'seq')) as T;
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

/** The MappingStore on the SQL port: the same statements on SQLite and PostgreSQL. */
export function createSqlMappingStore(db: Database): MappingStore {
  return {
    async createChart(chart) {
      await db.execute(
        'INSERT INTO mapping_charts (id, name, completed, date, landmarks, risk_level) VALUES ($1, $2, $3, $4, $5, $6)',
        [chart.id, chart.name, chart.completed ?? null, chart.date ?? null, chart.landmarks ?? null, chart.risk_level ?? null],
      );
    },
    async getChart(id) {
      const [row] = await db.query('SELECT id, name, completed, date, landmarks, risk_level FROM mapping_charts WHERE id = $1', [id]);
      return row ? toChartRecord(row) : undefined;
    },
    async listCharts() {
      return (await db.query('SELECT id, name, completed, date, landmarks, risk_level FROM mapping_charts ORDER BY seq')).map(toChartRecord);
    },
    async listVessels() {
      return (await db.query('SELECT * FROM mapping_vessels ORDER BY seq')).map((r) => numeric<VesselDetailed>(r, 'crew'));
    },
    async getVessel(id) {
      const [row] = await db.query('SELECT * FROM mapping_vessels WHERE id = $1', [id]);
      return row ? numeric<VesselDetailed>(row, 'crew') : undefined;
    },
    async listHazards() {
      return (await db.query('SELECT * FROM mapping_hazards ORDER BY seq')).map((r) => present<Hazard>(r));
    },
    async listJournalEntries() {
      return (await db.query('SELECT * FROM mapping_journal ORDER BY date, seq')).map((r) => present<JournalEntry>(r));
    },
    async listResources() {
      return (await db.query('SELECT * FROM mapping_resources ORDER BY seq')).map((r) => numeric<Resource>(r, 'quantity'));
    },
    async createResource(resource) {
      await db.execute(
        'INSERT INTO mapping_resources (id, name, category, quantity, unit, vessel) VALUES ($1, $2, $3, $4, $5, $6)',
        [resource.id, resource.name, resource.category, resource.quantity, resource.unit, resource.vessel ?? null],
      );
    },
  };
}
