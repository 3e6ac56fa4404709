import t from 'tap';
import { setupServer } from 'msw/node';
import { createClient } from '../generated/mapping/client/index.ts';
import * as mapping from '../generated/mapping/sdk.gen.ts';
import { createClient as createHealthClient } from '../generated/health/client/index.ts';
import * as health from '../generated/health/sdk.gen.ts';
import { createFakeClock } from '../src/lib/clock.ts';
import { createStatefulHandlers } from './stateful-handlers.ts';

t.test('the reference mapping API in-process through MSW and the generated SDK', async (t) => {
  const clock = createFakeClock();
  const mocks = await createStatefulHandlers({ clock, config: { rateLimitLimit: 3 } });
  const server = setupServer(...mocks.handlers);
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(async () => {
    server.close();
    await mocks.close();
  });
  const client = createClient({ baseUrl: 'http://localhost:8081' });

  t.test('a created chart reads back unchanged', async (t) => {
    const chart = { name: 'Harbour of St John’s', completed: true, date: '1763-06-20', landmarks: 14, risk_level: 'Low' as const };
    const created = await mapping.createChart({ client, body: chart });
    t.equal(created.response!.status, 201);
    t.match(created.data, { status: 'success', id: /^[A-Za-z0-9_-]+$/ });
    const read = await mapping.getChart({ client, path: { chartId: created.data!.id } });
    t.equal(read.response!.status, 200);
    t.same(read.data, { status: 'success', data: chart });
    const list = await mapping.listCharts({ client });
    t.same(Object.keys(list.data!.data), [created.data!.id], 'the private store held nothing else');
  });

  t.test('an unknown chart id answers 404 in the mapping error shape', async (t) => {
    const { error, response } = await mapping.getChart({ client, path: { chartId: 'chart_missing' } });
    t.equal(response!.status, 404);
    t.match(error, { status: 'error', message: String });
  });

  t.test('an invalid chart answers 400 naming the problem, and nothing is stored', async (t) => {
    const { error, response } = await mapping.createChart({ client, body: { name: 'x', risk_level: 'Extreme' } as never });
    t.equal(response!.status, 400);
    t.match(error, { status: 'error', message: /risk_level/ });
    t.equal(Object.keys((await mapping.listCharts({ client })).data!.data).length, 1);
  });

  t.test('a body over the limit answers 413 as the listener would', async (t) => {
    const response = await fetch('http://localhost:8081/api/charts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    t.equal(response.status, 413);
    t.match(await response.json(), { status: 'error' });
  });

  t.test('the gateway passes the mapping API on to its pool', async (t) => {
    const viaGateway = createClient({ baseUrl: 'http://localhost:8080' });
    const { data, response } = await mapping.listCharts({ client: viaGateway, headers: { authorization: 'Bearer some-token' } });
    t.equal(response!.status, 200);
    t.equal(Object.keys(data!.data).length, 1, 'the same store as the mapping role');
  });

  t.test("the gateway's rate limiter counts requests made through MSW", async (t) => {
    const viaGateway = createClient({ baseUrl: 'http://localhost:8080' });
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await mapping.listVessels({ client: viaGateway, headers: { authorization: 'Bearer limited-token' } })).response!.status,
      );
    }
    t.same(statuses, [200, 200, 200, 429], 'the fourth request of the token is over the limit of 3');
    const other = await mapping.listVessels({ client: viaGateway, headers: { authorization: 'Bearer another-token' } });
    t.equal(other.response!.status, 200, 'another token has its own count');
    // In-process: the gateway's stages ran without its listener, which counted no request (the mapping
    // listener did: it is the pool member the gateway passed requests on to).
    const metrics = await mocks.system.metrics.render();
    t.notMatch(metrics, /portolan_http_requests_total\{role="gateway"/, 'no request reached the gateway listener');
    t.match(
      metrics,
      /portolan_http_requests_total\{role="mapping",operation="listVessels",status="200"\} [1-9]/,
      'the pool member answered over its socket',
    );
  });

  t.test('/health answers on every role', async (t) => {
    for (const port of [8080, 8081, 8100, 8200, 8300, 8301]) {
      const { data, response } = await health.getHealth({ client: createHealthClient({ baseUrl: `http://localhost:${port}` }) });
      t.equal(response!.status, 200, `port ${port}`);
      t.match(data, { status: 'healthy', timestamp: clock.now().toISOString() });
    }
  });

  t.test('a path no operation serves is left to MSW, which fails it', async (t) => {
    await t.rejects(fetch('http://localhost:8081/api/nowhere'), TypeError);
  });
});

t.test('only the chosen interfaces, on chosen base URLs', async (t) => {
  const mocks = await createStatefulHandlers({ interfaces: ['mapping'], baseUrls: { mapping: 'http://charts.test/v1' } });
  const server = setupServer(...mocks.handlers);
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(async () => {
    server.close();
    await mocks.close();
  });
  t.equal(mocks.handlers.length, 2, "one handler for the mapping role, after the one for the system's own traffic");
  const { response } = await mapping.listVessels({ client: createClient({ baseUrl: 'http://charts.test/v1' }) });
  t.equal(response!.status, 200);
  await t.rejects(fetch('http://charts.test/v1/health'), TypeError, 'health was not chosen');
  await t.rejects(fetch('http://localhost:8081/api/vessels'), TypeError, 'the default base URL is not used');
});
