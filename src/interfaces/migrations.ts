import type { Migration } from '../stores/database.ts';
import { MAPPING_MIGRATIONS } from './mapping/migrations.ts';

/** Every interface's schema changes, applied at start; each interface owns a range of versions. */
export const ALL_MIGRATIONS: readonly Migration[] = [...MAPPING_MIGRATIONS];
