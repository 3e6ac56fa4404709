import type { Migration } from '../stores/database.ts';
import { MAPPING_MIGRATIONS } from './mapping/migrations.ts';
import { ACCOUNT_MIGRATIONS } from '../accounts/migrations.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './device-config/migrations.ts';
import { ACCESS_SESSION_MIGRATIONS } from './access-session/migrations.ts';

/** Every interface's schema changes, applied at start; each interface owns a range of versions. */
export const ALL_MIGRATIONS: readonly Migration[] = [...MAPPING_MIGRATIONS, ...ACCOUNT_MIGRATIONS, ...DEVICE_CONFIG_MIGRATIONS, ...ACCESS_SESSION_MIGRATIONS];
