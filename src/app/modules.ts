import type { InterfaceModule } from '../server/interface-module.ts';
import type { Migration } from '../stores/database.ts';
import { ACCOUNT_MIGRATIONS } from '../accounts/migrations.ts';
import { JOB_MIGRATIONS } from '../stores/job-queue.ts';
import { mappingModule } from '../interfaces/mapping/module.ts';
import { topologyModule } from '../interfaces/topology/module.ts';
import { snapshotsModule } from '../interfaces/snapshots/module.ts';
import { clientRegistrationModule } from '../interfaces/client-registration/module.ts';
import { rateLimitModule } from '../interfaces/rate-limit/module.ts';
import { deviceConfigModule } from '../interfaces/device-config/module.ts';
import { healthModule } from '../interfaces/health/module.ts';
import { accessSessionModule } from '../interfaces/access-session/module.ts';

/** Every interface the system serves: adding one is its folder and one line here. */
export const MODULES: readonly InterfaceModule[] = [
  mappingModule,
  topologyModule,
  snapshotsModule,
  clientRegistrationModule,
  rateLimitModule,
  deviceConfigModule,
  healthModule,
  accessSessionModule,
];

/** The schema changes of a system serving `modules`: the job port's, the accounts' and each module's (versions unique across them). */
export const migrationsOf = (modules: readonly InterfaceModule[]): readonly Migration[] => [
  ...JOB_MIGRATIONS,
  ...ACCOUNT_MIGRATIONS,
  ...modules.flatMap((m) => m.migrations ?? []),
];

/** Every schema change of the system (the users CLI migrates with it too). */
export const ALL_MIGRATIONS = migrationsOf(MODULES);
