import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';
import type { TapTest } from '../src/lib/tap-test.ts';
import { checkAnswer } from './answer-check.ts';
import { headerCaseProblems } from './header-case-check.ts';
import { createFetchClient, createHttpClient } from './http.ts';
import { loadSpecSet } from './spec-set.ts';

const specs = loadSpecSet();

t.test('a name not in its conventional case is a problem; a name the response declares is expected as the spec spells it', async (t) => {
  const doc = {
    openapi: '3.1.0',
    paths: {},
    components: { responses: { Made: { description: 'made', headers: { Location: {}, 'X-Odd-ID': {} } } } },
  } as unknown as OpenApiDocument;
  const op = {
    operationId: 'make',
    method: 'post',
    path: '/things',
    operation: { responses: { '201': { $ref: '#/components/responses/Made' }, '4XX': { description: 'no' } } },
    roles: [],
  } as unknown as OperationEntry;
  t.same(headerCaseProblems(doc, op, 201, ['Location', 'X-Odd-ID', 'Content-Type', 'Date', 'X-Request-Id']), [], 'all conventional');
  t.same(headerCaseProblems(doc, op, 201, ['location', 'X-Odd-Id', 'content-type', 'WWW-Authenticate', 'Www-Authenticate']), [
    { name: 'location', expected: 'Location' },
    { name: 'X-Odd-Id', expected: 'X-Odd-ID' },
    { name: 'content-type', expected: 'Content-Type' },
    { name: 'Www-Authenticate', expected: 'WWW-Authenticate' },
  ]);
  // A status the operation declares only as a range: no declared headers there, the table decides.
  t.same(headerCaseProblems(doc, op, 404, ['X-Odd-ID']), [{ name: 'X-Odd-ID', expected: 'X-Odd-Id' }]);
});

/** A server that answers every request with these fields, names in their case as given. */
async function answering(t: TapTest, fields: string[], status = 200) {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, fields);
    res.end('{"status":"healthy"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('the engine’s client keeps the names as on the wire, and an answer with a lower-case name breaks the check', async (t) => {
  const url = await answering(t, ['content-type', 'application/json', 'cache-control', 'no-store', 'X-Request-Id', 'r1']);
  const client = createHttpClient({ timeoutMs: 5000 });
  t.teardown(() => client.close());
  const res = await client.send({ method: 'GET', url: `${url}/health`, headers: {} });
  t.equal(res.status, 200);
  t.match(res.headers, { 'content-type': 'application/json', 'cache-control': 'no-store' }, 'the checks still read lower-case names');
  t.same(
    res.rawHeaderNames?.filter((n) => !['Date', 'Connection', 'Keep-Alive', 'Transfer-Encoding', 'Content-Length'].includes(n)),
    ['content-type', 'cache-control', 'X-Request-Id'],
    'wire case and order kept',
  );
  // Each request its own names: a second answer on the same pooled connection is read afresh.
  const again = await client.send({ method: 'GET', url: `${url}/health`, headers: {} });
  t.ok(again.rawHeaderNames?.includes('content-type'));

  const target = specs.find('getHealth');
  t.ok(target, 'the health operation is in the specs');
  const verdict = checkAnswer(specs, target!, res, false, () => {});
  t.same(
    verdict.violations.filter((v) => v.check === 'header').map((v) => v.message),
    [
      'the header name content-type is not in its conventional case (Content-Type): clients that match names case-sensitively miss it',
      'the header name cache-control is not in its conventional case (Cache-Control): clients that match names case-sensitively miss it',
    ],
  );
  const fine = checkAnswer(
    specs,
    target!,
    { ...res, rawHeaderNames: ['Content-Type', 'Cache-Control', 'X-Request-Id', 'Date'] },
    false,
    () => {},
  );
  t.same(
    fine.violations.filter((v) => v.check === 'header'),
    [],
    'conventional names pass',
  );
});

t.test('a client that cannot see the wire case (fetch) makes no claim about it', async (t) => {
  const url = await answering(t, ['content-type', 'application/json', 'cache-control', 'no-store']);
  const res = await createFetchClient({ timeoutMs: 5000 }).send({ method: 'GET', url: `${url}/health`, headers: {} });
  t.equal(res.rawHeaderNames, undefined);
  const verdict = checkAnswer(specs, specs.find('getHealth')!, res, false, () => {});
  t.same(
    verdict.violations.filter((v) => v.check === 'header'),
    [],
  );
});
