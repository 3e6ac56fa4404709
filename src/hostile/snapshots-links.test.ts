// Hostile cases of the links the snapshot diagnostics API (C, the diagnostics role) builds from a request:
// the upload's 302 Location and the discovery links of a snapshot record. A Host header is the client's to
// choose, so it only ever picks one of the service's own names (the same rule as the login's redirect).
import t from 'tap';
import { request } from 'node:http';
import type { Config } from '../app/config.ts';
import { startTestSystem } from '../app/test-system.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { healthyArchive, MULTIPART, snapshotBody, until } from '../interfaces/snapshots/test-snapshots-helpers.ts';

const API = '/snapshot-analyzer/api/snapshots';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const ADMIN = { adminUser: 'admin', adminPassword: 'links admin pw' };
const LINKS = ['files', 'commands', 'gui_uri', 'diagnostics'] as const;

type Answer = { status: number; location: string | undefined; body: string };

/** One request to the diagnostics role with exactly these headers (Host included: fetch would not send ours). */
function send(url: string, method: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: hostname, port, path: pathname, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

async function startDiagnostics(t: TapTest, config: Partial<Config> = {}) {
  const { system } = await startTestSystem(t, { config: { ...ADMIN, ...config } });
  const listening = system.url('diagnostics');
  const login = await fetch(`${system.url('login')}/resource/loginAction.jsp`, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ userid: ADMIN.adminUser, passwd: ADMIN.adminPassword }) });
  await login.arrayBuffer();
  const cookie = login.headers.getSetCookie().map((line) => line.split(';', 1)[0]).join('; ');
  const port = new URL(listening).port;
  return {
    listening,
    port,
    upload: (host: string) => send(`${listening}${API}`, 'POST', { host, cookie, 'content-type': MULTIPART, accept: JSON_TYPE }, snapshotBody(healthyArchive())),
    /** The record once it is processed (200), read with this Host. */
    record: (host: string, id: string) =>
      until(async () => {
        const answer = await send(`${listening}${API}/${id}`, 'GET', { host, cookie, accept: JSON_TYPE });
        return answer.status === 200 ? (JSON.parse(answer.body) as Record<(typeof LINKS)[number], string>) : undefined;
      }, `snapshot ${id} is processed`),
  };
}

/** The upload's Location and every link of its record start with `base`; the new id. */
async function linksUnder(t: TapTest, diagnostics: Awaited<ReturnType<typeof startDiagnostics>>, host: string, base: string): Promise<void> {
  const uploaded = await diagnostics.upload(host);
  t.equal(uploaded.status, 302, `Host ${host}: 302`);
  const id = /\/(\d+)$/.exec(uploaded.location ?? '')?.[1];
  t.equal(uploaded.location, `${base}${API}/${id}`, `Host ${host}: Location under ${base}`);
  const record = await diagnostics.record(host, id!);
  for (const link of LINKS) t.ok(record[link].startsWith(`${base}/snapshot-analyzer/`), `Host ${host}: ${link} ${record[link]} is under ${base}`);
  t.notMatch(JSON.stringify(record), /evil/, `Host ${host}: nothing of it in the record`);
}

t.test('C-upload-location-host: an unlisted Host never reaches the upload’s Location or the record’s links; listed names are kept', async (t) => {
  const diagnostics = await startDiagnostics(t);
  for (const host of ['evil.example', `evil.example:${diagnostics.port}`, 'localhost:1', `localhost:${diagnostics.port}.evil.example`, `[::2]:${diagnostics.port}`]) {
    await linksUnder(t, diagnostics, host, diagnostics.listening);
  }
  // curl -i to http://localhost:<port> then the Location with the same cookie jar: the host-only cookie needs the same name.
  await linksUnder(t, diagnostics, `localhost:${diagnostics.port}`, `http://localhost:${diagnostics.port}`);
  await linksUnder(t, diagnostics, `LocalHost:${diagnostics.port}`, `http://localhost:${diagnostics.port}`);
});

t.test('C-upload-location-public-url: with PORTOLAN_DIAGNOSTICS_PUBLIC_URL every Location and link is under it, whatever the Host', async (t) => {
  const diagnostics = await startDiagnostics(t, { diagnosticsPublicUrl: 'https://diag.example.com/' });
  for (const host of ['evil.example', `localhost:${diagnostics.port}`]) await linksUnder(t, diagnostics, host, 'https://diag.example.com');
});

t.test('C-upload-location-cookie-domain: with a cookie domain its names are kept as the client reached them (a proxy in front); look-alikes are not', async (t) => {
  const diagnostics = await startDiagnostics(t, { diagnosticsCookieDomain: 'example.com' });
  await linksUnder(t, diagnostics, 'api.example.com:8443', 'http://api.example.com:8443');
  await linksUnder(t, diagnostics, 'api.example.com', 'http://api.example.com');
  await linksUnder(t, diagnostics, 'api.example.com.evil.example', diagnostics.listening);
});
