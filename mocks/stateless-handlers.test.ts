import t from 'tap';
import { setupServer } from 'msw/node';
import { createClient } from '../generated/mapping/client/index.ts';
import * as mapping from '../generated/mapping/sdk.gen.ts';
import { createClient as createSessionClient } from '../generated/access-session/client/index.ts';
import * as sessions from '../generated/access-session/sdk.gen.ts';
import { INTERFACES, listOperations, loadSpec, type OpenApiDocument } from '../src/lib/spec-catalog.ts';
import { buildExampleRequest } from '../src/lib/contract/example-request.ts';
import { createResponseChecker } from '../src/lib/contract/response-check.ts';
import { isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';
import type { RoleName } from '../src/lib/roles.ts';
import { createCatchAllHandler } from './catch-all.ts';
import { defaultBaseUrl } from './base-url.ts';
import { createStatelessHandlers } from './stateless-handlers.ts';

type Json = Record<string, any>;

/** Every (status, media type, example name, value) an operation declares. */
function declaredExamples(doc: OpenApiDocument, responses: Json) {
  return Object.entries(responses).flatMap(([status, raw]) =>
    Object.entries((resolveRef<Json>(doc, raw)?.content ?? {}) as Json).flatMap(([mediaType, media]: [string, Json]) =>
      Object.entries(isObject(media.examples) ? media.examples : {}).map(([name, example]) => ({
        status: Number(status),
        mediaType,
        name,
        value: resolveRef<Json>(doc, example)?.value,
      })),
    ),
  );
}

t.test('every named example of every spec comes back when asked for by status and name', async (t) => {
  const server = setupServer(...INTERFACES.flatMap((i) => createStatelessHandlers(i.name)));
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(() => server.close());
  let examples = 0;
  for (const { name } of INTERFACES) {
    const doc = loadSpec(name);
    const check = createResponseChecker(doc);
    for (const op of listOperations(doc)) {
      const request = await buildExampleRequest(doc, op);
      const url = `${defaultBaseUrl(op.roles[0] as RoleName)}${request.url}`;
      for (const example of declaredExamples(doc, op.operation.responses as Json)) {
        examples++;
        const headers = { ...request.headers, prefer: `code=${example.status}, example=${example.name}`, accept: example.mediaType };
        const response = await fetch(url, { method: request.method, headers, body: request.body ?? null, redirect: 'manual' });
        const text = await response.text();
        const body = /json/.test(example.mediaType) ? JSON.parse(text) : text;
        const label = `${op.operationId} ${example.status} ${example.mediaType} ${example.name}`;
        t.equal(response!.status, example.status, label);
        t.same(body, example.value, `${label}: the example's value`);
        t.same(
          check(op, { status: response.status, headers: Object.fromEntries(response.headers), body }),
          [],
          `${label}: conforms, declared headers included`,
        );
      }
    }
  }
  t.ok(examples > 150, `${examples} examples checked`);
});

t.test('the mapping SDK against the stateless handlers', async (t) => {
  const baseUrl = 'http://mapping.test';
  const server = setupServer(...createStatelessHandlers('mapping', { baseUrl }));
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(() => server.close());
  const client = createClient({ baseUrl });
  const doc = loadSpec('mapping');

  t.test('answers the first 2xx example by default', async (t) => {
    const { data, response } = await mapping.listCharts({ client });
    t.equal(response!.status, 200);
    t.same(data, (doc.paths['/api/charts'] as Json).get.responses['200'].content['application/json'].examples.charts.value);
  });

  t.test('Prefer: code=404 answers the declared 404 example', async (t) => {
    const { error, response } = await mapping.getChart({ client, path: { chartId: 'chart_999' }, headers: { prefer: 'code=404' } });
    t.equal(response!.status, 404);
    t.match(error, { status: 'error', message: /not found/i });
  });

  t.test('Prefer: example=<name> finds the example in whichever answer declares it', async (t) => {
    const { error, response } = await mapping.createChart({ client, body: { name: 'x' }, headers: { prefer: 'example=invalidRiskLevel' } });
    t.equal(response!.status, 400);
    t.same(error, { status: 'error', message: 'Invalid chart data: risk_level must be one of Low, Medium, High, Unknown' });
  });

  t.test('an answer the spec does not declare fails loudly with what it does declare', async (t) => {
    const { response, error } = await mapping.getChart({ client, path: { chartId: 'chart_001' }, headers: { prefer: 'code=418' } });
    t.equal(response!.status, 500);
    t.match(error, { message: 'Portolan mock (mapping): getChart declares no 418 answer; it declares 200, 400, 404, 503.' });
    const unknown = await mapping.getChart({ client, path: { chartId: 'chart_001' }, headers: { prefer: 'example=nope' } });
    t.match(unknown.error, {
      message:
        "Portolan mock (mapping): getChart has no example named 'nope' in any answer; it has chart (200), unknownRisk (200), invalidId (400), notFound (404), storeDown (503).",
    });
  });

  t.test('a request no operation matches makes the call fail, with onUnhandledFrame: error', async (t) => {
    await t.rejects(fetch(`${baseUrl}/api/nowhere`), TypeError);
    await t.rejects(fetch(`${baseUrl}/api/charts`, { method: 'DELETE' }), TypeError, 'a wrong method is unhandled too');
    await t.rejects(fetch('http://localhost:8081/api/charts'), TypeError, 'another base URL is unhandled');
  });
});

t.test('a fixed answer per operation, and the Prefer header winning over it', async (t) => {
  const server = setupServer(
    ...createStatelessHandlers('mapping', { answers: { getChart: { status: 404 }, createChart: { example: 'unknownProperty' } } }),
  );
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(() => server.close());
  const client = createClient({ baseUrl: 'http://localhost:8081' });
  t.equal((await mapping.getChart({ client, path: { chartId: 'chart_001' } })).response!.status, 404);
  t.equal((await mapping.getChart({ client, path: { chartId: 'chart_001' }, headers: { prefer: 'code=200' } })).response!.status, 200);
  t.equal((await mapping.createChart({ client, body: { name: 'x' } })).response!.status, 400);
  t.throws(() => createStatelessHandlers('mapping', { answers: { getChrat: {} } }), /no operation getChrat in the spec/);
});

t.test('declared response headers are sent (Location of a created access session)', async (t) => {
  const server = setupServer(...createStatelessHandlers('access-session'));
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(() => server.close());
  const client = createSessionClient({ baseUrl: 'http://localhost:8080' });
  const { response, data } = await sessions.createAccessSession({
    client,
    auth: () => 'admin:secret',
    body: { variables: {} } as never,
  });
  t.equal(response!.status, 201);
  t.equal(response!.headers.get('location'), `/access/sessions/${(data as Json).id}`);
});

t.test('the catch-all answers anything unmocked with a 501 naming the method and URL', async (t) => {
  const server = setupServer(...createStatelessHandlers('health'), createCatchAllHandler());
  server.listen({ onUnhandledFrame: 'error' });
  t.teardown(() => server.close());
  const health = await fetch('http://localhost:8300/health');
  t.equal(health.status, 200, 'a mocked operation still answers');
  const response = await fetch('http://localhost:8300/nowhere?x=1', { method: 'PUT' });
  t.equal(response!.status, 501);
  t.equal(response.headers.get('content-type'), 'application/problem+json');
  t.match(await response.json(), { title: 'Not mocked', status: 501, detail: /PUT http:\/\/localhost:8300\/nowhere/ });
});
