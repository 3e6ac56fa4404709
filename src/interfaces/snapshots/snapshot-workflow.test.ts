import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { SaxesParser } from 'saxes';
import t from 'tap';
import xpath from 'xpath';
import { createClient } from '../../../generated/snapshots/client/index.ts';
import * as sdk from '../../../generated/snapshots/sdk.gen.ts';
import type { DiagnosticOutput, Snapshot } from '../../../generated/snapshots/types.gen.ts';
import { startTestSystem, tempSqliteUrl } from '../../app/test-system.ts';
import { packFolder } from './engine/test-archive.ts';

const ADMIN_PASSWORD = 'diagnostics workflow pw';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const SAMPLE_DIR = new URL('./sample/', import.meta.url).pathname;

/** Parses strictly (any ill-formed byte throws), then gives a DOM for XPath. */
function strictXml(text: string) {
  const sax = new SaxesParser();
  sax.on('error', (error) => {
    throw error;
  });
  sax.write(text).close();
  return new DOMParser().parseFromString(text, 'text/xml');
}

t.test(
  "the seed's workflow over real HTTP through the SDK: log in, upload, 202 then 200, hits in XML and JSON, the description twice, list, delete all",
  async (t) => {
    const { url: database, dir } = tempSqliteUrl(t);
    const snapshotDataDir = join(dir, 'snapshots');
    // This process takes uploads but processes none, so the snapshot is seen processing (202) for sure.
    const { system } = await startTestSystem(t, {
      config: { database, snapshotDataDir, adminPassword: ADMIN_PASSWORD, snapshotConcurrency: 0 },
    });

    // Log in at the login server: the cookies come on the 302 itself.
    const login = await sdk.loginDiagnosticsUser({
      client: createClient({ baseUrl: system.url('login') }),
      body: { userid: 'admin', passwd: ADMIN_PASSWORD },
      redirect: 'manual',
    } as Parameters<typeof sdk.loginDiagnosticsUser>[0]);
    t.equal(login.response?.status, 302);
    const setCookies = login.response!.headers.getSetCookie();
    t.ok(
      setCookies.some((c) => c.startsWith('sso_completed=1')),
      'sso_completed=1 marks the login done',
    );
    const cookie = setCookies.map((c) => c.split(';', 1)[0]).join('; ');
    const client = createClient({ baseUrl: system.url('diagnostics'), headers: { cookie } });
    const asJson = { accept: JSON_TYPE };

    // Upload a snapshot archive (the shipped sample's files: a device with known problems).
    const scratch = mkdtempSync(join(tmpdir(), 'portolan-workflow-'));
    t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
    const archive = join(scratch, 'device.snapshot.tgz');
    await packFolder(SAMPLE_DIR, archive);
    const uploaded = await sdk.uploadSnapshot({
      client,
      body: { snapshot: new File([readFileSync(archive)], 'device.snapshot.tgz') },
      redirect: 'manual',
    } as Parameters<typeof sdk.uploadSnapshot>[0]);
    t.equal(uploaded.response?.status, 302);
    const location = uploaded.response!.headers.get('location')!;
    const id = /\/snapshot-analyzer\/api\/snapshots\/(\w+)$/.exec(location)?.[1];
    t.ok(id && id !== '0', `Location names the new snapshot (${location})`);

    const processing = await sdk.getSnapshot({ client, path: { snapshotId: id! }, headers: asJson });
    t.equal(processing.response?.status, 202, 'processing');
    t.equal(processing.response!.headers.get('retry-after'), '2');
    t.match(processing.data, { id, processing_status: 'PROCESSING' });

    // A second process on the same store and data directory processes it (the job port).
    await startTestSystem(t, { config: { database, snapshotDataDir, adminPassword: ADMIN_PASSWORD, roles: ['diagnostics'] } });
    let ready = processing;
    for (let polls = 0; ready.response?.status === 202 && polls < 1500; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ready = await sdk.getSnapshot({ client, path: { snapshotId: id! }, headers: asJson });
    }
    t.equal(ready.response?.status, 200, 'ready');
    const record = ready.data as Snapshot;
    t.match(record, { id, processing_status: 'COMPLETE', hostname: /\S/, chassis_serial: /\S/, file_name: 'device.snapshot.tgz' });

    // Hits in JSON and in XML, the same.
    const json = await sdk.getSnapshotDiagnostics({ client, path: { snapshotId: id! }, query: { set: 'hit' }, headers: asJson });
    t.equal(json.response?.status, 200);
    const output = json.data as DiagnosticOutput;
    t.ok(output.diagnostics.hit_count > 0, `${output.diagnostics.hit_count} hits`);
    t.ok(
      output.diagnostics.diagnostic.every((d) => d.run_data.match),
      'set=hit gives hits only',
    );
    const xmlAnswer = await fetch(`${system.url('diagnostics')}/snapshot-analyzer/api/snapshots/${id}/diagnostics?set=hit`, {
      headers: { cookie },
    });
    t.equal(xmlAnswer.headers.get('content-type'), 'application/vnd.vendor.diagnostics.api+xml', 'XML without an Accept header');
    const doc = strictXml(await xmlAnswer.text());
    t.equal(
      xpath.select('string(/diagnostic_output/diagnostics/@hit_count)', doc as never),
      String(output.diagnostics.hit_count),
      '/diagnostic_output/diagnostics/@hit_count',
    );
    const names = (xpath.select('/diagnostic_output/diagnostics/diagnostic/@name', doc as never) as Attr[]).map((a) => a.value);
    t.same(
      names,
      output.diagnostics.diagnostic.map((d) => d.name),
      'each diagnostic element has its name attribute',
    );
    for (const d of output.diagnostics.diagnostic) {
      t.equal(
        xpath.select(`string(/diagnostic_output/diagnostics/diagnostic[@name="${d.name}"]//h_header)`, doc as never),
        d.results.h_header,
        `${d.name}: its h_header is a descendant`,
      );
    }

    // The description, twice: the same record.
    const first = await sdk.updateSnapshot({
      client,
      path: { snapshotId: id! },
      body: { description: 'before the upgrade' },
      headers: asJson,
    });
    const second = await sdk.updateSnapshot({
      client,
      path: { snapshotId: id! },
      body: { description: 'before the upgrade' },
      headers: asJson,
    });
    t.equal(first.response?.status, 200);
    t.same(second.data, first.data, 'idempotent');
    t.equal((first.data as Snapshot).description, 'before the upgrade');

    const listed = await sdk.listSnapshots({ client, headers: asJson });
    t.same(listed.data, { id: ['0', id] });
    const deleted = await sdk.deleteAllSnapshots({ client, headers: asJson });
    t.same(deleted.data, { id: [id] });
    t.same((await sdk.listSnapshots({ client, headers: asJson })).data, { id: ['0'] }, 'the sample stays');
    t.equal((await sdk.getSnapshot({ client, path: { snapshotId: id! } })).response?.status, 404);
  },
);
