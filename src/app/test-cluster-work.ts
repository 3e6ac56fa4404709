// Test helper: the work a test cluster (test-cluster.ts) is given while its processes are killed, and a ledger
// of every write it acknowledged (a 2xx, or the 302 of an upload or a login), so a test can read each back.
import { request } from 'undici';
import type { Cluster } from './test-cluster.ts';

export type Ledger = {
  charts: { id: string; name: string }[];
  clientIds: string[];
  topologyTasks: string[];
  deployTasks: string[];
  snapshots: string[];
  /** Cookie headers of acknowledged diagnostics logins. */
  sessions: string[];
  /** Requests with the rate-limited token: answered by a gateway, or lost with a process (maybe counted). */
  counted: { answered: number; lost: number };
};

export const newLedger = (): Ledger => ({
  charts: [],
  clientIds: [],
  topologyTasks: [],
  deployTasks: [],
  snapshots: [],
  sessions: [],
  counted: { answered: 0, lost: 0 },
});

/** The rate limit of a kill test: high enough that the work never reaches it. */
export const KILL_LIMIT = 100_000;
/** The settings of a kill test's processes. */
export const KILL_SETTINGS = {
  PORTOLAN_RATE_LIMIT_LIMIT: String(KILL_LIMIT),
  // A window longer than any run: the work token's count must not start over mid-test (a slow run passes 300 s).
  PORTOLAN_RATE_LIMIT_WINDOW_SECONDS: '86400',
  // A task or a processing job whose process died is taken up again this long after.
  PORTOLAN_CENTRAL_TASK_LEASE_MS: '1500',
  PORTOLAN_SNAPSHOT_LEASE_MS: '1500',
  // The standby takes over this long after the active device died.
  PORTOLAN_DEVICE_LEASE_MS: '800',
};

/** The bearer token every chart create carries: the rate limiter counts it across both gateways. */
export const WORK_TOKEN = 'scale-out-work-token';

const basic = (cluster: Cluster) => `Basic ${Buffer.from(`admin:${cluster.adminPassword}`).toString('base64')}`;
const json = { 'content-type': 'application/json' };

/** An answer HAProxy made itself (no process of the role answered): its HTML error pages. */
const fromHaproxy = (response: Response) => response.status >= 500 && (response.headers.get('content-type') ?? '').startsWith('text/html');

/** fetch that answers undefined when the connection broke (its process was killed mid-request). */
async function send(url: string, init: RequestInit): Promise<Response | undefined> {
  try {
    const response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
    await response.clone().text(); // the whole answer arrived
    return response;
  } catch {
    return undefined;
  }
}

/** One unit of work per role: what a process of that role does when it is killed. */
export type Work = (cluster: Cluster, ledger: Ledger, tag: string) => Promise<void>;

/** A chart created through the gateway (the gateway, then the mapping pool), with the rate-limited token. */
export const createChart: Work = async (cluster, ledger, tag) => {
  const name = `chart-${tag}`;
  const response = await send(`${cluster.urls.gateway}/api/charts`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${WORK_TOKEN}` },
    body: JSON.stringify({ name, landmarks: 3, risk_level: 'Low' }),
  });
  if (!response || fromHaproxy(response)) ledger.counted.lost++;
  else ledger.counted.answered++;
  if (response?.status === 201) ledger.charts.push({ id: ((await response.json()) as { id: string }).id, name });
};

/** A client registration (the gateway, then the device's OAuth objects); routed by Host, which fetch cannot set. */
export const register: Work = async (cluster, ledger) => {
  try {
    const response = await request(`${cluster.urls.gateway}/vendor-oauth2/v1/client-register`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: cluster.registrationHost },
      body: new URLSearchParams({ username: 'cluster.user@example.com', password: cluster.registrationPassword }).toString(),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const body = await response.body.text();
    if (response.statusCode === 200) ledger.clientIds.push((JSON.parse(body) as { client_id: string }).client_id);
  } catch {
    // the connection broke with a killed process: not acknowledged
  }
};

/** A topology created on central: its deployment task runs on some central process and calls the device. */
export const createTopology =
  (token: () => string): Work =>
  async (cluster, ledger, tag) => {
    const s = tag.replace(/[^A-Za-z0-9]/g, '_');
    const response = await send(`${cluster.urls.central}/mgmt/cm/ssl-orch/api/topology`, {
      method: 'POST',
      headers: { ...json, 'x-vendor-auth-token': token() },
      body: JSON.stringify(topology(s)),
    });
    if (response?.status === 202) ledger.topologyTasks.push(((await response.json()) as { id: string }).id);
  };

/** An asynchronous declarative deployment on the device. */
export const deployDeclaration: Work = async (cluster, ledger, tag) => {
  const tenant = `Scale_${tag.replace(/[^A-Za-z0-9]/g, '_')}`;
  const response = await send(`${cluster.urls.device}/mgmt/shared/appsvcs/declare?async=true`, {
    method: 'POST',
    headers: { ...json, authorization: basic(cluster) },
    body: JSON.stringify({
      class: 'ADC',
      schemaVersion: '3.0.0',
      [tenant]: {
        class: 'Tenant',
        A1: {
          class: 'Application',
          S1: { class: 'Service_HTTP', virtualAddresses: ['192.0.2.111'], pool: 'P1' },
          P1: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: ['198.51.100.11'] }] },
        },
      },
    }),
  });
  if (response?.status === 202) ledger.deployTasks.push(((await response.json()) as { id: string }).id);
};

/** A snapshot upload to diagnostics (its processing job runs on some diagnostics process). */
export const uploadSnapshot =
  (cookies: () => string): Work =>
  async (cluster, ledger, tag) => {
    const form = new FormData();
    form.append('snapshot', new Blob([`not a snapshot archive (${tag})`]), `${tag}.qkview`);
    const response = await send(`${cluster.urls.diagnostics}/snapshot-analyzer/api/snapshots`, {
      method: 'POST',
      headers: { cookie: cookies() },
      body: form,
    });
    const id = /\/snapshot-analyzer\/api\/snapshots\/([A-Za-z0-9_-]+)$/.exec(response?.headers.get('location') ?? '')?.[1];
    if (response?.status === 302 && id) ledger.snapshots.push(id);
  };

/** A diagnostics login on the login role: the session it sets must then work on diagnostics. */
export const logIn: Work = async (cluster, ledger) => {
  const cookie = await diagnosticsLogin(cluster);
  if (cookie) ledger.sessions.push(cookie);
};

/** The cookies of a diagnostics form login as the administrator, or undefined when it was not acknowledged. */
export async function diagnosticsLogin(cluster: Cluster): Promise<string | undefined> {
  const response = await send(`${cluster.urls.login}/resource/loginAction.jsp`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ userid: 'admin', passwd: cluster.adminPassword }).toString(),
  });
  if (response?.status !== 302) return undefined;
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** A management-system token (central's login). */
export async function centralToken(cluster: Cluster): Promise<string> {
  const response = await fetch(`${cluster.urls.central}/mgmt/shared/authn/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ username: 'admin', password: cluster.adminPassword, loginProviderName: 'local' }),
  });
  return ((await response.json()) as { token: { token: string } }).token.token;
}

const topology = (s: string) => ({
  template: {
    TOPOLOGY: {
      name: `t_${s}`,
      ingressNetwork: { vlans: [{ name: '/Common/vlan_internal' }] },
      type: 'topology_l3_outbound',
      sslSetting: `ssl_${s}`,
      securityPolicy: `policy_${s}`,
    },
    SSL_SETTINGS: { name: `ssl_${s}` },
    SECURITY_POLICY: {
      name: `policy_${s}`,
      rules: [
        { name: 'All Traffic', mode: 'edit', action: 'allow', operation: 'AND', isDefault: true, actionOptions: { ssl: 'intercept' } },
      ],
    },
    SERVICE_CHAIN: {},
    SERVICE: {},
  },
  targetList: [{ type: 'DEVICE', name: 'bigip-cluster' }],
});

/** Who a round kills, and how it comes back. */
export type Victims = {
  /** The process (its index, or worker number) the round kills. */
  pick(round: number): Promise<number>;
  /** kill -9; resolves once it is gone. */
  kill(victim: number): Promise<void>;
  /** What to wait for once it is dead (a standby taking over). */
  afterKill?(victim: number): Promise<void>;
  /** Resolves once it (or its replacement) answers again. */
  restart(victim: number): Promise<void>;
};

/**
 * `rounds` rounds: each starts `burst` units of `works` (in turn), kills the victim once `killAfter` of them (default
 * 1) are answered (the others in flight), waits for the rest, and has the victim back. `onKill` hears of each kill.
 */
export async function killRounds(
  cluster: Cluster,
  options: {
    tag: string;
    rounds: number;
    burst: number;
    killAfter?: number;
    works: readonly Work[];
    ledger: Ledger;
    victims: Victims;
    onKill(victim: number): void;
  },
): Promise<void> {
  const { victims, works } = options;
  for (let round = 0; round < options.rounds; round++) {
    const victim = await victims.pick(round);
    let answered = 0;
    let enough: () => void = () => undefined;
    const killTime = new Promise<void>((resolve) => (enough = resolve));
    const burst = Array.from({ length: options.burst }, (_, i) =>
      works[i % works.length]!(cluster, options.ledger, `${options.tag}-${round}-${i}`).finally(
        () => ++answered >= (options.killAfter ?? 1) && enough(),
      ),
    );
    await killTime;
    await victims.kill(victim);
    options.onKill(victim);
    await victims.afterKill?.(victim);
    await Promise.all(burst);
    await victims.restart(victim);
  }
}

/** A kill test's start: an empty ledger, a central token and a diagnostics session, and each kind of work. */
export async function startWork(cluster: Cluster) {
  const token = await centralToken(cluster);
  const cookies = await diagnosticsLogin(cluster);
  if (!cookies) throw new Error('the diagnostics login failed before any kill');
  return {
    ledger: newLedger(),
    cookies,
    work: {
      createChart,
      register,
      deployDeclaration,
      createTopology: createTopology(() => token),
      uploadSnapshot: uploadSnapshot(() => cookies),
      logIn,
    } satisfies Record<string, Work>,
  };
}
