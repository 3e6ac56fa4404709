import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import fc from 'fast-check';
import t from 'tap';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { evaluateSnapshot, extractSnapshot, loadRuleSetFile, readSnapshotFolder, type SnapshotContent } from '../snapshots/engine/index.ts';
import { declarationFacts } from '../snapshots/engine/declaration-facts.ts';
import { writeFiles } from '../snapshots/engine/test-device-archives.ts';
import type { HostFacts } from './host-commands.ts';
import { collectDeviceSnapshot, packSnapshot, type SnapshotLayout, type SnapshotSources } from './snapshot-source.ts';
import { scriptFitsBraces } from './tmsh-config.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

const HOST: HostFacts = {
  uptimeSeconds: 86_400,
  loadAverage: [0, 0, 0],
  disk: { filesystem: '/dev/sda1', mountedOn: '/var', totalBytes: 100e9, freeBytes: 50e9, availableBytes: 50e9 },
  memory: {
    source: 'proc-meminfo',
    totalKiB: 16e6,
    freeKiB: 8e6,
    sharedKiB: 0,
    buffCacheKiB: 0,
    availableKiB: 9e6,
    swap: { totalKiB: 0, freeKiB: 0 },
  },
};

type Script = { partition: string; name: string; apiAnonymous: string };
const sources = (declaration: unknown, dbVariables: Record<string, string>, scripts: Script[]): SnapshotSources => ({
  identity: { hostname: 'device-1.example.net', machineId: '9c2d3b1e-5f4a-4e6b-8a7c-1d2e3f4a5b6c' },
  version: '16.1.0',
  clock: createFakeClock(Date.parse('2026-11-02T09:30:00Z')),
  declaration: async () => declaration,
  dbVariables: async () => dbVariables,
  scripts: async () => scripts,
  deployTasks: async () => [],
  hostFacts: async () => HOST,
});

/** The snapshot of `from` in `layout`, its files written to a folder and read by the diagnostics engine. */
async function read(from: SnapshotSources, layout: SnapshotLayout): Promise<SnapshotContent> {
  const snapshot = await collectDeviceSnapshot(from, undefined, layout);
  const dir = await mkdtemp(join(tmpdir(), 'portolan-device-layout-'));
  try {
    await writeFiles(dir, Object.fromEntries(snapshot.files.map((f) => [f.path, f.body.toString('utf8')])));
    const content = await readSnapshotFolder(dir, ruleSet.reads);
    if (!content.ok) throw new Error(content.message);
    return content.content;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// --- Declarations as the declarative service takes them (ADC classes), random but valid in shape.
const NAME = /^[A-Za-z][A-Za-z0-9_]{0,7}$/;
const name = fc.stringMatching(NAME);
const address = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 99 })).map(([ip, rd]) => `${ip}%${rd}`),
);
const port = fc.integer({ min: 0, max: 65535 });
const monitor = fc.record(
  {
    class: fc.constant('Monitor'),
    monitorType: fc.constantFrom('http', 'https', 'tcp', 'icmp'),
    interval: fc.integer({ min: 1, max: 99 }),
    timeout: fc.integer({ min: 1, max: 300 }),
  },
  { requiredKeys: ['class', 'monitorType'] },
);

/** An application: pools referring to its monitors or built-in ones, services referring to its pools, a missing pool or none. */
const application = fc
  .record({
    monitors: fc.uniqueArray(name, { maxLength: 2 }),
    pools: fc.uniqueArray(name, { maxLength: 3 }),
    services: fc.uniqueArray(name, { maxLength: 3 }),
  })
  .chain(({ monitors, pools, services }) => {
    const names = new Set<string>();
    const fresh = (list: string[]) => list.filter((n) => !names.has(n) && names.add(n));
    const [m, p, s] = [fresh(monitors), fresh(pools), fresh(services)];
    const monitorRef = fc.oneof(
      fc.constantFrom('http', 'tcp', 'gateway_icmp'),
      ...(m.length ? [fc.constantFrom(...m), fc.constantFrom(...m).map((use) => ({ use }))] : []),
    );
    const poolRef = fc.oneof(
      fc.constant('missing_pool'),
      ...(p.length ? [fc.constantFrom(...p), fc.constantFrom(...p).map((use) => ({ use }))] : []),
    );
    const pool = fc.record(
      {
        class: fc.constant('Pool'),
        members: fc.array(fc.record({ servicePort: port, serverAddresses: fc.array(address, { maxLength: 3 }) }), { maxLength: 3 }),
        monitors: fc.array(monitorRef, { maxLength: 3 }),
      },
      { requiredKeys: ['class'] },
    );
    const service = fc.record(
      {
        class: fc.constantFrom('Service_HTTP', 'Service_HTTPS', 'Service_TCP'),
        virtualAddresses: fc.array(address, { minLength: 1, maxLength: 3 }),
        virtualPort: port,
        pool: poolRef,
        serverTLS: fc.constant({ bigip: '/Common/clientssl' }),
      },
      { requiredKeys: ['class', 'virtualAddresses'] },
    );
    return fc
      .tuple(fc.tuple(...m.map(() => monitor)), fc.tuple(...p.map(() => pool)), fc.tuple(...s.map(() => service)))
      .map(([ms, ps, ss]) => ({
        class: 'Application',
        template: 'generic',
        ...Object.fromEntries([...m.map((n, i) => [n, ms[i]]), ...p.map((n, i) => [n, ps[i]]), ...s.map((n, i) => [n, ss[i]])]),
      }));
  });

const declaration = fc
  .uniqueArray(
    name.filter((n) => n !== 'Common'),
    { maxLength: 3, selector: (n) => n.toLowerCase() },
  )
  .chain((tenants) =>
    fc.tuple(...tenants.map(() => fc.dictionary(name, application, { maxKeys: 3 }))).map((apps) => ({
      class: 'ADC',
      schemaVersion: '3.0.0',
      ...Object.fromEntries(tenants.map((tenant, i) => [tenant, { class: 'Tenant', ...apps[i] }])),
    })),
  );
const dbVariables = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9._]{0,15}$/), fc.string({ unit: 'grapheme', maxLength: 20 }), {
  maxKeys: 5,
});
/** Script text: anything (quotes, backslashes, newlines); braces often unbalanced, which tmsh cannot hold. */
const scriptText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.stringMatching(/^(when [A-Z_]+ \{\n( +(set ::x 1|log local0\. "a\\"b"|\\\}|# \{ \})\n)*\}\n?)*$/),
);
const scripts = fc.uniqueArray(
  fc.record({
    partition: fc.constantFrom('Common', 'Shared'),
    name: fc.stringMatching(/^[A-Za-z][A-Za-z0-9_ .]{0,10}$/),
    apiAnonymous: scriptText,
  }),
  { maxLength: 4, selector: (s) => `${s.partition}/${s.name}` },
);

// --- What the rules see: the collections, normalised where the two layouts name the same thing differently.
type Row = { id: string; [field: string]: unknown };
/** A collection's items as rows, sorted: a device archive's from its configuration, a Portolan snapshot's from its declaration. */
const rows = (content: SnapshotContent, collection: string): Row[] => {
  const facts =
    content.collections?.[collection as 'pools'] ?? declarationFacts(content.text.get('config/declarations.json'))[collection as 'pools'];
  const key = (row: Row) => `${row.id} ${JSON.stringify(row)}`;
  return facts.map((f) => ({ id: f.id, ...f.fields })).sort((a, b) => (key(a) < key(b) ? -1 : 1));
};

/** A Portolan-layout reference (as written in the declaration) resolved as the device resolves it, to the full path the device archive names. */
function resolved(row: Row, key: string, locals: ReadonlySet<string>, elsewhere: (folder: string) => string): Row {
  const folder = `/${row.tenant}/${row.application}`;
  const resolve = (ref: string) =>
    ref === '' || ref.startsWith('/') ? ref : locals.has(`${folder}/${ref}`) ? `${folder}/${ref}` : `${elsewhere(folder)}/${ref}`;
  const value = row[key];
  return { ...row, [key]: Array.isArray(value) ? value.map(resolve) : resolve(String(value)) };
}

t.test('the device archive layout, written then read, gives the rules the same state as the Portolan layout', async (t) => {
  await fc.assert(
    fc.asyncProperty(declaration, dbVariables, scripts, async (adc, db, scriptObjects) => {
      const from = sources(adc, db, scriptObjects);
      const [portolan, device] = [await read(from, 'portolan-snapshot'), await read(from, 'device-archive')];
      t.equal(device.manifest.format, 'device-archive');
      t.same(device.notes, []);
      const pools = new Set(rows(portolan, 'pools').map((p) => p.id));
      const monitors = new Set(rows(portolan, 'monitors').map((m) => m.id));
      for (const collection of ['tenants', 'members', 'monitors', 'listeners'])
        t.same(rows(device, collection), rows(portolan, collection), collection);
      t.same(
        rows(device, 'applications'),
        rows(portolan, 'applications').map((a) => ({ ...a, template: '' })),
        'applications (tmsh has no template)',
      );
      t.same(
        rows(device, 'pools'),
        rows(portolan, 'pools').map((p) => resolved(p, 'monitors', monitors, () => '/Common')),
        'pools',
      );
      t.same(
        rows(device, 'services'),
        rows(portolan, 'services').map((s) => resolved(s, 'pool', pools, (folder) => folder)),
        'services',
      );
      t.same(JSON.parse(device.text.get('config/db-variables.json')!), db, 'db variables');
      const fitting = scriptObjects.filter((s) => scriptFitsBraces(s.apiAnonymous));
      t.same(
        rows(device, 'scripts').map((s) => ({ id: s.id, text: s.text })),
        fitting.map((s) => ({ id: `/${s.partition}/${s.name}`, text: s.apiAnonymous })).sort((a, b) => (a.id < b.id ? -1 : 1)),
        'scripts whose braces balance, as written',
      );
      const log = device.text.get('var/log/snapshot') ?? '';
      for (const s of scriptObjects.filter((s) => !scriptFitsBraces(s.apiAnonymous)))
        t.ok(log.includes(`/${s.partition}/${s.name}`), 'a script left out is named');
    }),
    { seed: 20261102, numRuns: 40 },
  );
});

t.test(
  'the whole loop with a device archive: the device takes it, the diagnostics service processes it, the planted problems are hits',
  async (t: TapTest) => {
    const password = 'device archive loop pw';
    const { system } = await startTestSystem(t, { config: { adminPassword: password, deviceHostname: 'loop-device.example.net' } });
    const device = system.url('device');
    const auth = { authorization: basicAuthorization('admin', password), 'content-type': 'application/json' };
    const adc = {
      class: 'ADC',
      schemaVersion: '3.0.0',
      id: 'loop',
      Loop: {
        class: 'Tenant',
        App: {
          class: 'Application',
          template: 'generic',
          css_pool: { class: 'Pool', members: [{ servicePort: 8080, serverAddresses: ['192.0.2.44'] }] },
        },
      },
    };
    t.equal(
      (await fetch(`${device}/mgmt/shared/appsvcs/declare`, { method: 'POST', headers: auth, body: JSON.stringify(adc) })).status,
      200,
    );
    t.equal(
      (await fetch(`${device}/mgmt/shared/diagnostics/snapshot?layout=zip`, { headers: auth })).status,
      400,
      'an unknown layout is refused',
    );
    const answer = await fetch(`${device}/mgmt/shared/diagnostics/snapshot?layout=device-archive`, { headers: auth });
    t.equal(answer.status, 200);
    const archive = Buffer.from(await answer.arrayBuffer());

    const dir = await mkdtemp(join(tmpdir(), 'portolan-device-archive-loop-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'upload.tgz'), archive);
    const extracted = await extractSnapshot(join(dir, 'upload.tgz'), join(dir, 'files'));
    if (!extracted.ok) return t.fail(extracted.message);
    t.match(extracted.manifest, { format: 'device-archive', hostname: 'loop-device.example.net' });
    t.ok(extracted.files.includes('config/partitions/Loop/bigip.conf'));
    t.notOk(extracted.files.includes('manifest.json'), 'the real layout: no manifest');

    // Uploaded to the diagnostics role and processed there, as any snapshot.
    const login = await fetch(`${system.url('login')}/resource/loginAction.jsp`, {
      method: 'POST',
      body: new URLSearchParams({ userid: 'admin', passwd: password }),
      redirect: 'manual',
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const form = new FormData();
    form.set('snapshot', new Blob([archive]), 'device.tgz');
    const upload = await fetch(`${system.url('diagnostics')}/snapshot-analyzer/api/snapshots`, {
      method: 'POST',
      headers: { cookie },
      body: form,
      redirect: 'manual',
    });
    t.equal(upload.status, 302);
    const location = upload.headers.get('location')!;
    let status = 202;
    for (let i = 0; i < 600 && status === 202; i++) {
      status = (await fetch(location, { headers: { cookie } })).status;
      if (status === 202) await new Promise((resolve) => setImmediate(resolve));
    }
    t.equal(status, 200, 'processed');
    const hits = (await (
      await fetch(`${location}/diagnostics?set=hit`, { headers: { cookie, accept: 'application/vnd.vendor.diagnostics.api+json' } })
    ).json()) as { diagnostics: { diagnostic: { name: string; output: string[] }[] }; system_information: { hostname: string } };
    const byName = Object.fromEntries(hits.diagnostics.diagnostic.map((d) => [d.name, d.output]));
    t.same(byName['pool-without-monitor'], ['/Loop/App/css_pool (monitorCount 0, memberCount 1)']);
    t.same(byName['pool-member-documentation-address'], ['/Loop/App/css_pool 192.0.2.44:8080 (address 192.0.2.44)']);
    t.equal(hits.system_information.hostname, 'loop-device.example.net');
    t.notOk('declaration-missing' in byName);

    // The same archive read directly gives the same hits.
    const direct = await readSnapshotFolder(join(dir, 'files'), ruleSet.reads);
    if (!direct.ok) return t.fail(direct.message);
    t.same(
      evaluateSnapshot(ruleSet, direct.content, 'hit')
        .diagnostics.diagnostic.map((d) => d.name)
        .sort(),
      Object.keys(byName).sort(),
    );
    t.equal(
      (await buffer(packSnapshot(await collectDeviceSnapshot(sources(adc, {}, []), undefined, 'device-archive'))))
        .subarray(0, 2)
        .toString('hex'),
      '1f8b',
    );
  },
);
