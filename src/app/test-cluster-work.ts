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
