import t from 'tap';
import { createClient } from '../../../generated/mapping/client/index.ts';
import * as sdk from '../../../generated/mapping/sdk.gen.ts';
import type { ChartInput } from '../../../generated/mapping/types.gen.ts';
import { loadSpec } from '../../lib/spec-catalog.ts';
import { startTestSystem, tempSqliteUrl } from '../../app/test-system.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { VESSELS } from './seed-data.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { request as httpRequest } from 'node:http';

/** A GET whose path goes out exactly as written (fetch would normalise dot segments first). */
function rawGet(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

// Response validation is on in the test system: every answer below is also checked against the spec.

const CHARTS: ChartInput[] = [
  { name: 'Harbour of St John’s', completed: true, date: '1763-06-20', landmarks: 14, risk_level: 'Low' },
  { name: 'Strait of Belle Isle', completed: false, risk_level: 'High' },
  { name: 'Burgeo Islands' },
  { name: 'Unsurveyed cove', landmarks: 0, risk_level: 'Unknown' },
];

async function createAndRestart(t: TapTest, database: string) {
  const first = await startTestSystem(t, { config: { database } });
  const client = createClient({ baseUrl: first.system.url('mapping') });
  const ids: string[] = [];
  for (const chart of CHARTS) {
    const { data, response } = await sdk.createChart({ client, body: chart });
    t.equal(response?.status, 201, `created ${chart.name}`);
    t.match(data, { status: 'success', id: /^[A-Za-z0-9_-]+$/ });
    ids.push(data!.id);
  }
  const before = (await sdk.listCharts({ client })).data;
  await first.stop();

  const second = await startTestSystem(t, { config: { database } });
  const again = createClient({ baseUrl: second.system.url('mapping') });
  const after = (await sdk.listCharts({ client: again })).data;
  t.same(after, before, 'the list is unchanged after a restart on the same store');
  t.same(Object.keys(after!.data), ids, 'in creation order, keyed by id');
  for (const [i, id] of ids.entries()) {
    const { data } = await sdk.getChart({ client: again, path: { chartId: id } });
    const { risk_level, ...rest } = CHARTS[i]!;
    t.same(data, { status: 'success', data: risk_level === 'Unknown' ? rest : CHARTS[i] }, `chart ${i} reads back unchanged`);
  }
}

t.test('charts created through the SDK survive a restart on the embedded store', async (t) => {
  await createAndRestart(t, tempSqliteUrl(t).url);
});

t.test('charts created through the SDK survive a restart on PostgreSQL', async (t) => {
  const url = await withTestPostgres(t);
  if (url) await createAndRestart(t, url);
});

t.test('mapping API on one running system', async (t) => {
  const { system } = await startTestSystem(t, { config: { bodyLimitBytes: 2048 } });
  const client = createClient({ baseUrl: system.url('mapping') });
  const raw = (path: string, init: RequestInit = {}) => fetch(`${system.url('mapping')}${path}`, init);
  const postJson = (path: string, body: string) => raw(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  t.test('GET / advertises every path the spec serves, with <id> placeholders', async (t) => {
    const { data } = await sdk.listEndpoints({ client });
    const paths = data!.available_endpoints.map((e) => e.path);
    t.same(paths, [
      '/api/charts',
      '/api/charts/<chart_id>',
      '/api/vessels',
      '/api/vessels/<vessel_id>',
      '/api/hazards',
      '/api/journal',
      '/api/resources',
    ]);
    t.same(data!.available_endpoints.find((e) => e.path === '/api/resources')!.methods, ['GET', 'POST']);
    t.equal(data!.title, "Captain Cook's Newfoundland Mapping API");
    t.equal(Object.keys(loadSpec('mapping').paths).length - 1, paths.length);
  });

  t.test('a chart created with risk level Unknown is stored and shown without a risk level', async (t) => {
    const { data: created } = await sdk.createChart({ client, body: { name: 'Fogbound reach', risk_level: 'Unknown' } });
    const { data, response } = await sdk.getChart({ client, path: { chartId: created!.id } });
    t.equal(response?.status, 200, 'the Chart response validated against the Chart schema (else 500)');
    t.same(data, { status: 'success', data: { name: 'Fogbound reach' } });
  });

  t.test('vessels: the list is basic, one vessel is detailed, an unknown id is 404', async (t) => {
    const { data: list } = await sdk.listVessels({ client });
    t.equal(list!.data.length, VESSELS.length);
    t.same(Object.keys(list!.data[0]!).sort(), ['crew', 'id', 'status', 'type']);
    t.same(new Set(list!.data.map((v) => v.status)), new Set(['Active', 'In-port', 'Damaged', 'Repairs']), 'every status');
    t.same(new Set(VESSELS.map((v) => v.weather_conditions)), new Set(['Favorable', 'Challenging', 'Dangerous']), 'every weather');
    const { data } = await sdk.getVessel({ client, path: { vesselId: 'grenville' } });
    t.same(data, { status: 'success', data: VESSELS[0] });
    const missing = await sdk.getVessel({ client, path: { vesselId: 'endeavour' } });
    t.equal(missing.response?.status, 404);
    t.same(missing.error, { status: 'error', message: "Vessel 'endeavour' was not found." });
    t.equal((await sdk.getChart({ client, path: { chartId: 'nope' } })).response?.status, 404, 'unknown chart');
  });

  t.test('hazards, journal and resources are listed; a resource is created and validated', async (t) => {
    t.ok((await sdk.listHazards({ client })).data!.data.length >= 5);
    const journal = (await sdk.listJournalEntries({ client })).data!.data;
    t.same(
      journal.map((e) => e.date),
      [...journal.map((e) => e.date)].sort(),
      'journal oldest first',
    );
    const { data, response } = await sdk.createResource({
      client,
      body: { name: 'Lead lines', category: 'instruments', quantity: 4, unit: 'each' },
    });
    t.equal(response?.status, 201);
    const resources = (await sdk.listResources({ client })).data!.data;
    t.match(resources.at(-1), { id: data!.id, name: 'Lead lines', quantity: 4 });
    const bad = await postJson('/api/resources', JSON.stringify({ name: 'Rum', category: 'grog', quantity: -1, unit: 'cask' }));
    t.equal(bad.status, 400);
    t.match(await bad.json(), { status: 'error', message: /category.*provisions.*quantity/s });
  });

  t.test('bad input gets a 400 Error, a large body 413; nothing is stored and the server stays up', async (t) => {
    const before = (await sdk.listCharts({ client })).data;
    const cases: [string, string][] = [
      ['malformed JSON', '{"name": "Half a chart"'],
      ['wrong types', JSON.stringify({ name: 7, completed: 'yes', landmarks: 1.5, date: 'tomorrow' })],
      ['missing name', JSON.stringify({ completed: true })],
      ['risk level outside the enum', JSON.stringify({ name: 'x', risk_level: 'Extreme' })],
      ['__proto__ key', '{"name": "x", "__proto__": {"polluted": true}}'],
      ['constructor key', JSON.stringify({ name: 'x', constructor: { prototype: { polluted: true } } })],
      ['not an object', '"just a string"'],
    ];
    for (const [what, body] of cases) {
      const response = await postJson('/api/charts', body);
      t.equal(response?.status, 400, `${what}: 400`);
      const error = await response.json();
      t.match(error, { status: 'error', message: String }, `${what}: Error body`);
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
    for (const id of ['..%2F..%2Fetc%2Fpasswd', '..', '../../etc/passwd', '%2E%2E%2Fx', 'a%00b']) {
      const response = await rawGet(system.url('mapping'), `/api/charts/${id}`);
      const expected = id.includes('/') ? 404 : 400; // a raw slash makes it another path
      t.equal(response.status, expected, `path id ${id}: ${expected}`);
      t.match(JSON.parse(response.body), { status: 'error' });
    }
    const big = await postJson('/api/charts', JSON.stringify({ name: 'x'.repeat(4096) }));
    t.equal(big.status, 413, 'over the body limit: 413');
    t.match(await big.json(), { status: 'error' });
    t.same((await sdk.listCharts({ client })).data, before, 'nothing was stored');
    t.equal((await sdk.listVessels({ client })).response?.status, 200, 'the server still answers');
  });
});
