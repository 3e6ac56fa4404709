// What the primary of `portolan start --workers N` does before it forks: it refuses a configuration whose
// state would be per process (a `memory` store), tries every port once, fixes the ports left to the system
// (0) so every worker listens on the same ones, applies the migrations and sets up the administrative
// account once (a generated password is announced once, and handed to every worker).
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import { portSettingOf, WORKERS_ENV } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { RoleName } from '../lib/roles.ts';
import { createAccountStore } from '../accounts/account-store.ts';
import { type AdminCredentials, bootstrapAdmin } from '../accounts/admin-bootstrap.ts';
import { parseDatabaseUrl } from '../stores/database-url.ts';
import { openDatabase } from '../stores/open-database.ts';
import { SQLITE_MEMORY } from '../stores/sqlite.ts';
import type { Config } from './config.ts';
import { migrationsOf, MODULES } from './modules.ts';
import { checkPortsFree, listenFailure } from './port-check.ts';

/** The role whose data plane (the virtual servers it deploys) binds ports of its own: it runs in worker 1 only. */
export const SINGLE_WORKER_ROLE: RoleName = 'device';

/**
 * Why this configuration cannot run in `config.workers` processes, in one line naming the setting to
 * change; undefined when it can (or runs in one). Each of these keeps state in the process's memory that
 * every worker must share.
 *
 * @example
 * workersProblem(loadConfig({ PORTOLAN_WORKERS: '2' })) // 'With 2 workers ... PORTOLAN_RATE_LIMIT_STORE is memory ...'
 */
export function workersProblem(config: Config): string | undefined {
  const n = config.workers;
  if (n <= 1) return undefined;
  const intro = `With ${n} workers (--workers or ${WORKERS_ENV}) every store must be shared by all of them`;
  const database = parseDatabaseUrl(config.database);
  if (database.engine === 'sqlite' && database.path === SQLITE_MEMORY)
    return `${intro}, but PORTOLAN_DATABASE is sqlite::memory: (one process's memory): set it to a file, sqlite:./data/portolan.db, or to postgres://..., or run 1 worker.`;
  if (config.rateLimitEnabled && config.roles.includes('gateway') && config.rateLimitStore === 'memory')
    return `${intro}, but PORTOLAN_RATE_LIMIT_STORE is memory (one process's counters): set it to sqlite:./data/rate-limit.db (this machine) or redis://host:6379, or run 1 worker.`;
  if (config.roles.every((role) => role === SINGLE_WORKER_ROLE))
    return `With ${n} workers (--workers or ${WORKERS_ENV}): the ${SINGLE_WORKER_ROLE} role runs in one worker only, and PORTOLAN_ROLES names no other role; run 1 worker.`;
  return undefined;
}

/**
 * The settings a start with more than one worker takes when they are left unset: the rate-limit counters,
 * `memory` by default for one process, go to a SQLite file beside the database (or under ./data), which
 * every worker of this machine shares. An explicit `memory` is kept, and refused (workersProblem).
 *
 * @example
 * sharedDefaults({ PORTOLAN_WORKERS: '2' }, 2, 'sqlite:./data/portolan.db') // { PORTOLAN_RATE_LIMIT_STORE: 'sqlite:data/rate-limit.db' }
 */
export function sharedDefaults(env: NodeJS.ProcessEnv, workers: number, databaseUrl: string): NodeJS.ProcessEnv {
  if (workers <= 1 || env.PORTOLAN_RATE_LIMIT_STORE !== undefined) return {};
  const database = parseDatabaseUrl(databaseUrl);
  const dir = database.engine === 'sqlite' && database.path !== SQLITE_MEMORY ? dirname(database.path) : 'data';
  return { PORTOLAN_RATE_LIMIT_STORE: `sqlite:${join(dir, 'rate-limit.db')}` };
}

export type WorkerStart = {
  /** The administrative account's credentials every worker uses (the password only when given or generated). */
  admin: AdminCredentials;
  /** Every role's port, a 0 replaced by the free port picked for all the workers. */
  ports: Readonly<Record<RoleName, number>>;
};

/**
 * Tries the ports, picks the ports left to the system, brings the store up to date and sets up the
 * administrative account, once for every worker. Throws the failures `portolan start` explains in one line
 * (StartError, DatabaseError, ...).
 */
export async function prepareWorkers(
  config: Config,
  deps: { logger: Logger; clock: Clock; announce: (message: string) => void },
): Promise<WorkerStart> {
  const roles = config.roles.map((role) => ({ role, port: config.ports[role] }));
  await checkPortsFree(config.host, roles);
  const ports = {
    ...config.ports,
    ...(await pickFreePorts(
      config.host,
      roles.filter((r) => r.port === 0).map((r) => r.role),
    )),
  };
  const database = await openDatabase(config.database, { migrations: migrationsOf(MODULES), logger: deps.logger });
  try {
    const admin = await bootstrapAdmin(createAccountStore(database, { clock: deps.clock }), {
      adminUser: config.adminUser,
      adminPassword: config.adminPassword,
      logger: deps.logger,
      announce: deps.announce,
    });
    return { admin, ports };
  } finally {
    await database.close();
  }
}

/** A free port for each role, all different, held until all are chosen. */
async function pickFreePorts(host: string, roles: readonly RoleName[]): Promise<Partial<Record<RoleName, number>>> {
  const servers: Server[] = [];
  try {
    const ports = await Promise.all(
      roles.map(
        (role) =>
          new Promise<[RoleName, number]>((resolve, reject) => {
            const server = createServer();
            servers.push(server);
            server.once('error', (error: NodeJS.ErrnoException) => reject(listenFailure(role, host, 0, error.code, portSettingOf(role))));
            server.listen({ port: 0, host, exclusive: true }, () => resolve([role, (server.address() as { port: number }).port]));
          }),
      ),
    );
    return Object.fromEntries(ports);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => (s.listening ? s.close(resolve) : resolve(undefined)))));
  }
}
