// Test helper: the multi-machine layout on one machine. K processes of every role (`portolan start` with
// PORTOLAN_ROLES=<role>) on one fresh PostgreSQL database and one Redis key prefix, HAProxy in front with the
// configuration `portolan haproxy-config` writes (a frontend per role, /health checks), every role that calls
// another pointed at that role's frontend. A test can kill -9 one process and start it again; everything is
// stopped when the test ends (and by the processes' watchdogs if the test process dies). The same for one
// process with every role (`single`), and for one `portolan start --workers 2` (`workers`, on the embedded
// stores: a SQLite file, no Redis) whose workers a test can kill (test-cluster-workers.ts).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createAccountStore } from '../accounts/account-store.ts';
import { DEVICE_CHECK_AUTH_ENV, haproxyConfig } from '../cli/haproxy-config.ts';
import { responseHeaderNames } from '../cli/haproxy-header-names.ts';
import { systemClock } from '../lib/clock.ts';
import { findFreePorts } from '../lib/free-ports.ts';
import { ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { withTestKeyPrefix, withTestRedis } from '../gateway/rate-limit/test-redis.ts';
import { openDatabase } from '../stores/open-database.ts';
import { withTestPostgres } from '../stores/test-postgres.ts';
import { ALL_MIGRATIONS } from './modules.ts';
import { managedProcess, type ManagedProcess } from './test-cluster-process.ts';
import { waitFor, healthy, haproxyServers } from './test-cluster-wait.ts';
import { followWorkers, type Workers } from './test-cluster-workers.ts';

const MAIN = join(import.meta.dirname, '..', 'cli', 'main.ts');
/** Where Debian installs HAProxy (not on every user's PATH). */
const HAPROXY_PATHS = ['haproxy', '/usr/sbin/haproxy'];
export const CLUSTER_REGISTRATION_USER = 'cluster.user@example.com';
/** The device's host name on every process (the inventory of central names it). */
export const CLUSTER_DEVICE_HOSTNAME = 'bigip-cluster';

export type ClusterNode = { role: RoleName; index: number; port: number; url: string; process: ManagedProcess };

export type Cluster = {
  /** Each role's URL: its HAProxy frontend (or, for a single process, its own listener). */
  urls: Record<RoleName, string>;
  nodes: readonly ClusterNode[];
  adminPassword: string;
  registrationPassword: string;
  /** The Host header registration is routed by. */
  registrationHost: string;
  /** PostgreSQL's, or the SQLite file's (`embedded`). */
  databaseUrl: string;
  /** The workers of the `workers` layout (undefined in the others). */
  workers: Workers | undefined;
  /** The settings every process got (the test's overrides included). */
  env: Readonly<Record<string, string>>;
  node(role: RoleName, index: number): ClusterNode;
  /** kill -9 the process (its whole group); resolves once it is gone. */
  kill(role: RoleName, index: number): Promise<void>;
  /** Starts it again on the same port; resolves once its /health is 200 and HAProxy has it in rotation. */
  restart(role: RoleName, index: number): Promise<void>;
  /**
   * Resolves once HAProxy's checks have every process (or those of `of`) in rotation, and of a device pair the
   * active one alone taking the writes (the standby fails the failover-status check).
   */
  settled(of?: readonly ClusterNode[]): Promise<void>;
};

export type ClusterOptions = {
  /**
   * Processes per role (default 2); `single` runs one process with every role and no HAProxy; `workers` one
   * `portolan start --workers 2` with every role (its workers share the ports: no HAProxy).
   */
  layout?: { perRole: number } | 'single' | 'workers';
  /**
   * Where the processes keep what they share: one PostgreSQL database and one Redis (`shared`, the default but
   * for `workers`), or the embedded default (`embedded`: a SQLite file; the rate-limit counters where the
   * start puts them by default: one process's memory, or with workers a SQLite file beside the database).
   */
  stores?: 'shared' | 'embedded';
  /** Settings for every process, over the harness's. */
  env?: Record<string, string>;
};

/** Why the cluster cannot run here (one line saying how to fix it), or undefined. */
export function haproxyCommand(): string | undefined {
  return HAPROXY_PATHS.find((path) => spawnSync(path, ['-v'], { stdio: 'ignore' }).error === undefined);
}

/**
 * Starts the cluster for `t` (stopped when `t` ends). Undefined after a visible SKIP when PostgreSQL or Redis
 * is missing, and after a failure when HAProxy is missing (scripts/system-packages.ts installs it).
 */
export async function startCluster(t: TapTest, options: ClusterOptions = {}): Promise<Cluster | undefined> {
  const layout = options.layout ?? { perRole: 2 };
  const balanced = typeof layout === 'object';
  const haproxy = balanced ? haproxyCommand() : undefined;
  if (balanced && !haproxy) {
    t.fail('HAProxy is not installed: run `node scripts/system-packages.ts` (npm test does) or, as root, `apt-get install -y haproxy`.');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'portolan-cluster-'));
  const stops: (() => Promise<void>)[] = [];
  t.teardown(async () => {
    await Promise.all(stops.map((stop) => stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const stores = await storesFor(t, options.stores ?? (layout === 'workers' ? 'embedded' : 'shared'), dir);
  if (!stores) return undefined;
  const { databaseUrl } = stores;
  const followed = layout === 'workers' ? followWorkers(() => nodes[0]?.process.output() ?? '') : undefined;

  const placements = balanced
    ? ROLE_NAMES.flatMap((role) => range(layout.perRole).map((index) => ({ role, index })))
    : [{ role: 'all' as const, index: 0 }];
  const ports = await findFreePorts(ROLE_NAMES.length + placements.length + 2);
  const servicePort = ports.at(-1)!;
  const frontend = Object.fromEntries(ROLE_NAMES.map((role, i) => [role, ports[i]!])) as Record<RoleName, number>;
  const statsPort = ports[ROLE_NAMES.length]!;
  const adminPassword = randomBytes(18).toString('base64url');
  const registrationHost = `localhost:${frontend.gateway}`;
  const local = (port: number) => `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PORTOLAN_HOST: '127.0.0.1',
    PORTOLAN_DATABASE: databaseUrl,
    PORTOLAN_ADMIN_USER: 'admin',
    PORTOLAN_ADMIN_PASSWORD: adminPassword,
    // The workers' pids and which one answered come from the info lines (the primary's, the access lines).
    PORTOLAN_LOG_LEVEL: followed ? 'info' : 'warn',
    PORTOLAN_LOG_FORMAT: 'json',
    PORTOLAN_VALIDATE_RESPONSES: 'true',
    PORTOLAN_SHUTDOWN_DRAIN_MS: '0',
    ...stores.env,
    // A counter store (Redis, or the workers' SQLite file) that does not answer is an error, not a silent count
    // in one process; given a second on this busy machine.
    PORTOLAN_RATE_LIMIT_OUTAGE_POLICY: 'fail-closed',
    PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS: '1000',
    PORTOLAN_MONITOR_INTERVAL_MS: '1000',
    PORTOLAN_DEVICE_HOSTNAME: CLUSTER_DEVICE_HOSTNAME,
    PORTOLAN_SNAPSHOT_DATA_DIR: join(dir, 'snapshots'), // shared by the diagnostics processes (one file system)
    ...(!balanced
      ? {}
      : {
          // Every role another one calls is reached at its frontend.
          ...Object.fromEntries(ROLE_NAMES.map((role) => [`PORTOLAN_${role.toUpperCase()}_PORT`, String(frontend[role])])),
          PORTOLAN_POOL_MEMBERS: `127.0.0.1:${frontend.mapping}`,
          PORTOLAN_MANAGEMENT_URL: local(frontend.device),
          PORTOLAN_REGISTRATION_HOST: registrationHost,
          PORTOLAN_DIAGNOSTICS_PUBLIC_URL: local(frontend.diagnostics),
        }),
    ...options.env,
  };
  const nodes: ClusterNode[] = placements.map(({ role, index }, i) => {
    const port = ports[ROLE_NAMES.length + 1 + i]!;
    const deviceDir = join(dir, `device-${role}-${index}`);
    mkdirSync(deviceDir, { recursive: true });
    const own: Record<string, string> =
      role === 'all'
        ? // Every role on a free port of its own; the gateway's is known, for /health.
          {
            ...Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0'])),
            PORTOLAN_GATEWAY_PORT: String(port),
            PORTOLAN_ROLES: 'all',
          }
        : { PORTOLAN_ROLES: role, [`PORTOLAN_${role.toUpperCase()}_PORT`]: String(port) };
    // The device processes are one device (an active/standby pair): the active one serves the deployed
    // services, at ports of this cluster's own (virtual port 80 on a port free now).
    Object.assign(own, { PORTOLAN_DEVICE_DATA_DIR: deviceDir, PORTOLAN_DEVICE_PORT_OFFSET: String(servicePort - 80) });
    const args = layout === 'workers' ? [MAIN, 'start', '--workers', '2'] : [MAIN, 'start'];
    const name = layout === 'workers' ? 'primary' : `${role}${index + 1}`;
    const process = managedProcess(
      name,
      globalThis.process.execPath,
      args,
      { ...globalThis.process.env, ...env, ...own },
      followed?.onLine,
    );
    return { role: role === 'all' ? 'gateway' : role, index, port, url: local(port), process };
  });
  stops.push(async () => void (await Promise.all(nodes.map((n) => n.process.kill()))));

  let statsUrl: string | undefined;
  if (haproxy) {
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(
      config,
      haproxyConfig({
        roles: ROLE_NAMES.map((role) => ({
          role,
          bind: { host: '127.0.0.1', port: frontend[role] },
          servers: nodes.filter((n) => n.role === role).map((n) => ({ host: '127.0.0.1', port: n.port })),
        })),
        checkIntervalMs: 250,
        stats: { host: '127.0.0.1', port: statsPort },
        deviceCheck: 'failover-status',
        headerNames: responseHeaderNames(),
        ...(env.PORTOLAN_REGISTRATION_PATH ? { registrationPath: env.PORTOLAN_REGISTRATION_PATH } : {}),
      }),
    );
    const balancer = managedProcess('haproxy', haproxy, ['-db', '-f', config], {
      ...globalThis.process.env,
      [DEVICE_CHECK_AUTH_ENV]: Buffer.from(`admin:${adminPassword}`).toString('base64'),
    });
    balancer.start();
    stops.push(() => balancer.kill());
    statsUrl = local(statsPort);
    await healthy({ url: statsUrl, process: balancer }, '/;csv');
  }
  for (const node of nodes) node.process.start();
  await Promise.all(nodes.map((node) => healthy(node)));
  if (followed)
    await waitFor(
      'every worker to run',
      async () => followed.running(),
      () => nodes[0]!.process.output().slice(-2000),
    );
  const single = balanced ? undefined : await roleUrlsOf(nodes[0]!);
  const urls = single ?? (Object.fromEntries(ROLE_NAMES.map((role) => [role, local(frontend[role])])) as Record<RoleName, string>);

  const registrationPassword = randomBytes(18).toString('base64url');
  const database = await openDatabase(databaseUrl, { migrations: ALL_MIGRATIONS });
  try {
    await createAccountStore(database, { clock: systemClock }).setPassword(
      'registration_check',
      CLUSTER_REGISTRATION_USER,
      registrationPassword,
    );
  } finally {
    await database.close();
  }

  // HAProxy's view once its checks settle: every process in its role's backend; of a device pair, also the
  // active one alone in the backend that takes the writes.
  const inRotation = (states: Map<string, string>, of: readonly ClusterNode[]) =>
    of.every((n) => states.get(`${n.role}_processes/${n.process.name}`) === 'UP') &&
    nodes.filter((n) => n.role === 'device' && states.get(`device_active/${n.process.name}`) === 'UP').length === 1;
  const settled = async (of: readonly ClusterNode[] = nodes) => {
    if (!statsUrl) return;
    const url = statsUrl;
    let states = new Map<string, string>();
    await waitFor(
      `HAProxy to have ${of.length === nodes.length ? 'every process' : of.map((n) => n.process.name).join(', ')} in rotation`,
      async () => inRotation((states = await haproxyServers(url)), of),
      () => JSON.stringify(Object.fromEntries(states)),
    );
  };
  await settled();
  const nodeOf = (role: RoleName, index: number) => {
    const found = nodes.find((n) => n.role === role && n.index === index);
    if (!found) throw new Error(`no ${role} process ${index} in this cluster`);
    return found;
  };
  return {
    urls,
    nodes,
    adminPassword,
    registrationPassword,
    registrationHost: single ? `localhost:${new URL(single.gateway).port}` : registrationHost,
    databaseUrl,
    workers: followed?.workers,
    env,
    node: nodeOf,
    kill: (role, index) => nodeOf(role, index).process.kill(),
    restart: async (role, index) => {
      const node = nodeOf(role, index);
      await node.process.kill();
      node.process.start();
      await healthy(node);
      await settled([node]);
    },
    settled,
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * The database and the rate-limit settings: a fresh PostgreSQL database and a Redis key prefix (undefined after
 * a visible SKIP when one is missing), or a SQLite file under `dir` and the start's own default counters.
 */
async function storesFor(
  t: TapTest,
  stores: 'shared' | 'embedded',
  dir: string,
): Promise<{ databaseUrl: string; env: Record<string, string> } | undefined> {
  if (stores === 'embedded') {
    mkdirSync(join(dir, 'data'));
    return { databaseUrl: `sqlite:${join(dir, 'data', 'portolan.db')}`, env: {} };
  }
  const databaseUrl = await withTestPostgres(t);
  const redisUrl = await withTestRedis(t);
  if (!databaseUrl || !redisUrl) return undefined;
  return {
    databaseUrl,
    env: { PORTOLAN_RATE_LIMIT_STORE: redisUrl, PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX: withTestKeyPrefix(t, redisUrl) },
  };
}

/** The role URLs of a process that runs every role, from its role map. */
async function roleUrlsOf(node: ClusterNode): Promise<Record<RoleName, string>> {
  const map = (await (await fetch(`${node.url}/.well-known/portolan`)).json()) as { roles: { role: RoleName; url: string }[] };
  return Object.fromEntries(map.roles.map((r) => [r.role, r.url])) as Record<RoleName, string>;
}
