import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import type { TapTest } from '../../lib/tap-test.ts';
import { createClient } from '../../../generated/device-config/client/index.ts';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { evaluateSnapshot, extractSnapshot, loadRuleSetFile, readSnapshotFolder, validateManifest } from '../snapshots/engine/index.ts';
import { readFolder } from '../snapshots/engine/test-archive.ts';
import { ADMIN_PASSWORD, freePort } from './test-device.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

const HOSTNAME = 'device-7.example.net';
const SNAPSHOT_PATH = '/mgmt/shared/diagnostics/snapshot';

async function startDevice(t: TapTest) {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, deviceHostname: HOSTNAME } });
  const base = system.url('device');
  const client = createClient({ baseUrl: base, headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });
  return { system, base, client };
}

/** Downloads a snapshot over HTTP with the given headers; the archive's bytes and the answer. */
async function download(base: string, headers: Record<string, string>) {
  const response = await fetch(`${base}${SNAPSHOT_PATH}`, { headers });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Extracts an archive the way the diagnostics service does, into a fresh folder; its files as text. */
async function extracted(t: TapTest, bytes: Buffer) {
  const root = await mkdtemp(join(tmpdir(), 'portolan-device-snapshot-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'snapshot.tgz'), bytes);
  const result = await extractSnapshot(join(root, 'snapshot.tgz'), join(root, 'files'));
  if (!result.ok) throw new Error(`the engine refused the device's snapshot: ${result.message}`);
  return { dir: join(root, 'files'), files: await readFolder(join(root, 'files')) };
}

t.test(
  "a snapshot of the running device is an archive the diagnostics engine takes, with the device's real state, and its planted problems are found",
  async (t) => {
    const { base, client } = await startDevice(t);
    const port = await freePort();
    // Planted: a pool without a monitor, with a single member at a documentation address; access logging at debug; a script logging every request.
    const declaration = {
      class: 'ADC',
      schemaVersion: '3.0.0',
      id: 'snapshot-test',
      Web: {
        class: 'Tenant',
        App: {
          class: 'Application',
          template: 'generic',
          web: { class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], virtualPort: port, pool: 'web_pool' },
          web_pool: { class: 'Pool', monitors: [], members: [{ servicePort: 80, serverAddresses: ['192.0.2.10'] }] },
        },
      },
    };
    const deployed = await sdk.deployDeclaration({ client, body: declaration as never });
    t.equal(deployed.response?.status, 200, 'deployed');
    t.equal((await sdk.patchDbVariable({ client, path: { dbName: 'log.access.level' }, body: { value: 'debug' } })).response?.status, 200);
    const script = 'when HTTP_REQUEST {\n  log local0. "request [HTTP::uri]"\n}\n';
    t.equal((await sdk.createRule({ client, body: { name: 'log_all', apiAnonymous: script } })).response?.status, 200);

    const { response, bytes } = await download(base, { authorization: basicAuthorization('admin', ADMIN_PASSWORD) });
    t.equal(response.status, 200);
    t.equal(response.headers.get('content-type'), 'application/gzip');
    t.equal(
      response.headers.get('content-disposition'),
      `attachment; filename="${HOSTNAME}-20260101T000000Z.snapshot.tgz"`,
      'named after the host and the device clock (UTC)',
    );
    t.equal(response.headers.get('cache-control'), 'no-store');

    const { dir, files } = await extracted(t, bytes);
    t.same(Object.keys(files).sort(), [
      'commands/df.txt',
      'commands/memory.txt',
      'commands/uptime.txt',
      'config/db-variables.json',
      'config/declarations.json',
      'config/rules/Common~log_all.tcl',
      'logs/deployments.log',
      'logs/snapshot.log',
      'manifest.json',
    ]);

    const manifest = validateManifest(JSON.parse(files['manifest.json']!));
    if (!manifest.ok) return t.fail(manifest.message);
    const info = (await sdk.getDeviceInfo({ client })).data!;
    t.same(manifest.manifest, {
      format: 'portolan-snapshot/1',
      hostname: HOSTNAME,
      chassisSerial: info.machineId,
      platform: 'Portolan Virtual Edition',
      version: info.version,
      generatedAt: '2026-01-01T00:00:00.000Z',
    });

    t.same(
      JSON.parse(files['config/declarations.json']!),
      (await sdk.getDeclaration({ client })).data,
      'the declaration as GET /declare answers it',
    );
    t.same(JSON.parse(files['config/db-variables.json']!), {
      'dataplane.quic.log.level': 'Critical',
      'quic.qlogging': 'disable',
      'log.access.level': 'debug',
    });
    t.equal(files['config/rules/Common~log_all.tcl'], script, 'the script text exactly');
    t.match(
      files['logs/deployments.log'],
      /^2026-01-01T00:00:00\.000Z device-7\.example\.net info appsvcs: task [\w-]+: tenant Web: 200 success, \d+ lines, \d+ ms\n$/,
    );
    t.match(
      files['logs/snapshot.log'],
      /notice snapshot: taken: the deployed declaration, 3 db variables, 1 script objects, 1 deployment log lines/,
    );
    t.match(files['commands/uptime.txt'], /^ 00:00:00 up .*load average: [\d.]+, [\d.]+, [\d.]+\n$/);
    t.match(
      files['commands/df.txt'],
      /^Filesystem\s+1024-blocks\s+Used\s+Available\s+Capacity\s+Mounted on\n\S+\s+\d+\s+\d+\s+\d+\s+\d+%\s+\//,
    );
    t.match(files['commands/memory.txt'], /\nMem:\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\n/);

    const read = await readSnapshotFolder(dir, ruleSet.reads);
    if (!read.ok) return t.fail(read.message);
    const output = evaluateSnapshot(ruleSet, read.content, 'hit');
    t.same(output.system_information, { hostname: HOSTNAME, chassis_serial: info.machineId, platform: 'Portolan Virtual Edition' });
    const hits = output.diagnostics.diagnostic.map((d) => d.name);
    for (const planted of [
      'pool-without-monitor',
      'pool-single-member',
      'pool-member-documentation-address',
      'db-access-log-verbose',
      'script-logs-every-request',
    ]) {
      t.ok(hits.includes(planted), `${planted} is found`);
    }
    t.match(
      output.diagnostics.diagnostic.find((d) => d.name === 'pool-without-monitor')?.output,
      [/\/Web\/App\/web_pool/],
      'the pool is named',
    );
    for (const absent of [
      'declaration-missing',
      'health-commands-missing',
      'service-pool-not-found',
      'software-end-of-life',
      'log-error-rate',
    ])
      t.notOk(hits.includes(absent), `${absent} does not hit`);
  },
);

t.test('no credential, password hash, token, client secret or declared secret is ever in a snapshot', async (t) => {
  const { system, base, client } = await startDevice(t);
  const app = await sdk.createOauthClientApp({
    client,
    body: { name: 'alice-android-1', appName: 'alice-android-1', authType: 'secret', grantPassword: 'enabled' },
  });
  t.equal(app.response?.status, 200);
  const login = await sdk.loginDeviceUser({
    client: createClient({ baseUrl: base }),
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'tmos' },
  });
  const token = login.data!.token.token;
  const privateKey = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7private\n-----END PRIVATE KEY-----';
  const passphrase = 'cert-passphrase-5f2e9a';
  // A class the device does not model is kept as given and returned on GET: a certificate with its key.
  const withSecrets = {
    class: 'ADC',
    schemaVersion: '3.0.0',
    id: 'secrets',
    Bank: {
      class: 'Tenant',
      App: {
        class: 'Application',
        template: 'generic',
        tlsCert: {
          class: 'Certificate',
          certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
          privateKey,
          passphrase: { ciphertext: Buffer.from(passphrase).toString('base64'), protected: 'eyJhbGciOiJkaXIifQ', clear: passphrase },
        },
      },
    },
  };
  t.equal((await sdk.deployDeclaration({ client, body: withSecrets as never })).response?.status, 200);
  t.match(
    JSON.stringify((await sdk.getDeclaration({ client })).data),
    privateKey.split('\n')[1]!,
    'the device itself keeps and answers the key',
  );

  const { response, bytes } = await download(base, { 'x-vendor-auth-token': token });
  t.equal(response.status, 200, 'a login token opens it like any device operation');
  const tar = gunzipSync(bytes).toString('latin1');
  const [hashes] = await system.database.query('SELECT password_hash FROM account_users WHERE username = $1', ['admin']);
  const [secretHash] = await system.database.query('SELECT client_secret_hash FROM device_oauth_client_apps WHERE name = $1', [
    'alice-android-1',
  ]);
  const secrets = {
    'admin password': ADMIN_PASSWORD,
    'admin password hash': String(hashes!.password_hash),
    'client secret': app.data!.clientSecret,
    'client secret hash': String(secretHash!.client_secret_hash),
    'client id': app.data!.clientId,
    'login token': token,
    'refresh token': login.data!.refreshToken!.token,
    'private key': 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7private',
    passphrase,
    'passphrase (base64)': Buffer.from(passphrase).toString('base64'),
  };
  for (const [what, secret] of Object.entries(secrets)) t.notOk(tar.includes(secret), `the ${what} is not in the archive`);

  const { files } = await extracted(t, bytes);
  t.match(
    JSON.parse(files['config/declarations.json']!),
    {
      Bank: {
        App: { tlsCert: { class: 'Certificate', certificate: /BEGIN CERTIFICATE/, privateKey: '[redacted]', passphrase: '[redacted]' } },
      },
    },
    'the rest of the declaration is kept',
  );
});

t.test('a device with nothing deployed: no declaration file, and the engine says so', async (t) => {
  const { base } = await startDevice(t);
  const { bytes } = await download(base, { authorization: basicAuthorization('admin', ADMIN_PASSWORD) });
  const { dir, files } = await extracted(t, bytes);
  t.notOk('config/declarations.json' in files);
  t.equal(files['logs/deployments.log'], '');
  const read = await readSnapshotFolder(dir, ruleSet.reads);
  if (!read.ok) return t.fail(read.message);
  t.ok(evaluateSnapshot(ruleSet, read.content, 'hit').diagnostics.diagnostic.some((d) => d.name === 'declaration-missing'));
});

t.test('without credentials, or with wrong ones, there is no snapshot', async (t) => {
  const { base } = await startDevice(t);
  for (const headers of [{}, { authorization: basicAuthorization('admin', 'wrong') }, { 'x-vendor-auth-token': 'NOPE' }] as Record<
    string,
    string
  >[]) {
    const { response, bytes } = await download(base, headers);
    t.equal(response.status, 401);
    t.equal(response.headers.get('content-type'), 'application/json');
    t.notOk(bytes.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b])), 'no gzip body');
  }
});
