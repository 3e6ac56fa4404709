import type { Migration } from '../../stores/database.ts';
import { HAZARDS, JOURNAL, RESOURCES, VESSELS } from './seed-data.ts';

/** A SQL literal for the seed inserts (static data only; requests always use parameters). */
function literal(value: unknown): string {
  if (value === undefined || value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}

function inserts(table: string, columns: readonly string[], rows: readonly object[]): string {
  return rows
    .map(
      (row) =>
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => literal((row as Record<string, unknown>)[c])).join(', ')});`,
    )
    .join('\n');
}

/** `seq` keeps creation order: SQLite's rowid alias there, a sequence in PostgreSQL. */
const table = (name: string, columns: string) => ({
  sqlite: `CREATE TABLE ${name} (seq INTEGER PRIMARY KEY AUTOINCREMENT, ${columns});`,
  postgres: `CREATE TABLE ${name} (seq BIGSERIAL PRIMARY KEY, ${columns});`,
});

const VESSEL_COLUMNS = ['id', 'type', 'crew', 'status', 'current_position', 'heading', 'weather_conditions'];
const HAZARD_COLUMNS = ['id', 'name', 'kind', 'position', 'severity', 'charted', 'charted_by', 'notes'];
const JOURNAL_COLUMNS = ['id', 'date', 'author', 'vessel', 'position', 'weather', 'entry'];
const RESOURCE_COLUMNS = ['id', 'name', 'category', 'quantity', 'unit', 'vessel'];

const tables = [
  table('mapping_charts', 'id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, completed BOOLEAN, date TEXT, landmarks INTEGER, risk_level TEXT'),
  table(
    'mapping_vessels',
    'id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, crew INTEGER NOT NULL, status TEXT NOT NULL, current_position TEXT NOT NULL, heading TEXT NOT NULL, weather_conditions TEXT NOT NULL',
  ),
  table(
    'mapping_hazards',
    'id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL, position TEXT NOT NULL, severity TEXT NOT NULL, charted TEXT NOT NULL, charted_by TEXT, notes TEXT',
  ),
  table(
    'mapping_journal',
    'id TEXT NOT NULL UNIQUE, date TEXT NOT NULL, author TEXT NOT NULL, vessel TEXT, position TEXT, weather TEXT, entry TEXT NOT NULL',
  ),
  table(
    'mapping_resources',
    'id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, category TEXT NOT NULL, quantity INTEGER NOT NULL, unit TEXT NOT NULL, vessel TEXT',
  ),
];

/** The mapping application's schema and its starting data (versions 100-199 belong to interface A). */
export const MAPPING_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: 'mapping tables',
    up: { sqlite: tables.map((t) => t.sqlite).join('\n'), postgres: tables.map((t) => t.postgres).join('\n') },
  },
  {
    version: 101,
    name: 'mapping seed data: vessels, hazards, journal, resources',
    up: [
      inserts('mapping_vessels', VESSEL_COLUMNS, VESSELS),
      inserts('mapping_hazards', HAZARD_COLUMNS, HAZARDS),
      inserts('mapping_journal', JOURNAL_COLUMNS, JOURNAL),
      inserts('mapping_resources', RESOURCE_COLUMNS, RESOURCES),
    ].join('\n'),
  },
];
