import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { bodyShape } from './body-shape.ts';
import { checkExpectations, mismatch } from './expectations.ts';
import { interpolate } from './interpolate.ts';
import { invalidRequests } from './invalid-requests.ts';
import { bodyMedia, exampleParts } from './request-parts.ts';
import { describeRequest } from './request-summary.ts';
import { runConformance } from './run.ts';
import { loadScenario, loadScenarios } from './scenario-file.ts';
import { loadSpecSet } from './spec-set.ts';
import { parseTargets, resolveTarget, targetsOf } from './targets.ts';

const specs = loadSpecSet();

t.test('targets: one URL, per role, per interface, or the reference system', async (t) => {
  t.same(parseTargets(['http://10.0.0.5:8080/']), { reference: false, prism: false, map: { '*': 'http://10.0.0.5:8080' } });
  const { map } = parseTargets(['gateway=http://g:8080', 'mapping=http://m:8081', 'http://any:1']);
  t.equal(resolveTarget(map, 'rate-limit', 'gateway'), 'http://g:8080', 'by role');
  t.equal(resolveTarget(map, 'mapping', 'mapping'), 'http://m:8081', 'by interface');
  t.equal(resolveTarget(map, 'health', 'gateway'), 'http://g:8080', 'health on the gateway goes to the gateway');
  t.equal(resolveTarget(map, 'topology', 'central'), 'http://any:1', 'everything else to the default');
  t.same(
    targetsOf({ '*': 'http://one' }, 'health', ['gateway', 'mapping']),
    [{ role: 'gateway', url: 'http://one' }],
    'the same URL is checked once',
  );
  t.same(parseTargets(['reference']), { reference: true, prism: false, map: {} });
  t.same(parseTargets(['prism']), { reference: false, prism: true, map: {} });
  t.throws(() => parseTargets(['somewhere=http://x']), /somewhere is neither a role/);
  t.throws(() => parseTargets(['gateway=ftp://x']), /expected an http\(s\) URL/);
  t.throws(() => parseTargets(['http://a', 'http://b']), /the default URL is given twice/);
  t.throws(() => parseTargets(['reference', 'http://a']), /don't mix/);
  t.throws(() => parseTargets(['prism', 'mapping=http://a']), /--target prism starts every role itself/);
  t.throws(() => parseTargets(['prism', 'reference']), /two targets/);
});

t.test('variables: whole values keep their type, unknown ones are a setup error', async (t) => {
  const scope = { limit: 1000, token: 'abc', credentials: { admin: { user: 'root' } } };
  t.same(interpolate({ a: '${limit}', b: 'Bearer ${token}', c: ['${credentials.admin.user}'], '/data/${token}': 1 }, scope), {
    a: 1000,
    b: 'Bearer abc',
    c: ['root'],
    '/data/abc': 1,
  });
  t.throws(() => interpolate('${nope}', scope), { name: 'SetupError', message: 'unknown variable ${nope}' });
});

t.test('matchers of the step language', async (t) => {
  const none = () => undefined;
  t.equal(mismatch({ a: [1] }, { a: [1] }, none), undefined, 'deep equality');
  t.match(mismatch(2, 1, none), /expected 1, got 2/);
  t.equal(mismatch('x', { $type: 'string' }, none), undefined);
  t.match(mismatch(1.5, { $type: 'integer' }, none), /expected a integer/);
  t.equal(mismatch(undefined, { $absent: true }, none), undefined);
  t.match(mismatch('x', { $absent: true }, none), /expected absent/);
  t.match(mismatch(undefined, { $present: true }, none), /expected present/);
  t.equal(mismatch('42', { $between: [0, 300] }, none), undefined, 'header text is read as a number');
  t.match(mismatch(301, { $between: [0, 300] }, none), /from 0 to 300/);
  t.equal(mismatch('a=1&login_hint=x', { $matches: '[?&]login_hint=x' }, none), undefined);
  t.equal(
    mismatch({ n: 1 }, { $example: 'ref' }, () => ({ n: 1 })),
    undefined,
    '$example compares with the spec example',
  );
  t.throws(() => mismatch(1, { $nope: 1 }, none), /unknown matcher \$nope/);
  const found = checkExpectations(
    { status: 429, headers: { 'retry-after': '12' }, body: { a: { b: 0 } }, ms: 0 },
    { status: [200, 201], headers: { 'Retry-After': 12, server: { $absent: true } }, body: { '/a/b': 1 } },
    none,
  );
  t.same(
    found,
    [
      { pointer: '', message: 'expected status 200 or 201, got 429' },
      { pointer: '/a/b', message: 'expected 1, got 0' },
    ],
    'headers are case-insensitive text; each miss has its pointer',
  );
  const secret = checkExpectations(
    { status: 200, headers: {}, body: { client_secret: 'hunter2' }, ms: 0 },
    { body: { '/client_secret': { $type: 'integer' } } },
    none,
  );
  t.notMatch(secret[0]!.message, /hunter2/, 'a value that may be a credential is not shown');
});

t.test('invalid requests are built from the schema and are all really invalid', async (t) => {
  const { spec, op } = specs.find('createChart')!;
  const valid = exampleParts(spec.document, op);
  const variants = invalidRequests(spec, op, valid);
  const names = variants.map((v) => v.name);
  for (const expected of [
    'required body left out',
    'body that is not JSON',
    'required field /name left out',
    'field /conformance_unexpected_field the schema forbids',
    'wrong type at /landmarks (not-a-number for integer)',
    'value outside the enum at /risk_level',
  ]) {
    t.ok(names.includes(expected), expected);
  }
  const validate = spec.validator.at(bodyMedia(spec.document, op)[0]!.schemaPointer);
  t.ok(names.includes('body of a media type the operation does not take'), 'the spec declares 415: a wrong media type is tried');
  for (const v of variants) {
    // The media-type variant sends the valid body under an undeclared Content-Type: its headers are what is invalid.
    if (v.name === 'body of a media type the operation does not take')
      t.equal(v.parts.headers['content-type'], 'application/x-conformance-unknown');
    else if (v.parts.body && 'value' in v.parts.body) t.notOk(validate(v.parts.body.value), `${v.name}: the body breaks the schema`);
  }
  t.ok(validate((valid.body as { value: unknown }).value), 'while the example it starts from is valid');

  const getChart = specs.find('getChart')!;
  t.match(
    invalidRequests(getChart.spec, getChart.op, exampleParts(getChart.spec.document, getChart.op)).map((v) => v.name),
    ["path parameter chartId 'not valid!' breaks its schema"],
  );
  const redirect = specs.find('getAuthorizationRedirect')!;
  t.ok(
    invalidRequests(redirect.spec, redirect.op, exampleParts(redirect.spec.document, redirect.op)).some(
      (v) => v.name === "query parameter prompt 'not-an-allowed-value' breaks its schema",
    ),
  );
});

t.test('a body shape ignores map keys and array lengths, keeps declared fields and types', async (t) => {
  const { spec } = specs.find('listCharts')!;
  const schema = { $ref: '#/components/schemas/ChartList' };
  const one = bodyShape(spec.document, schema, { status: 'success', data: { c1: { name: 'a', landmarks: 1 } } });
  const other = bodyShape(spec.document, schema, {
    status: 'success',
    data: { zz: { name: 'b', landmarks: 2 }, yy: { name: 'c', landmarks: 3 } },
  });
  t.same(one, other);
  t.ok(one.includes('/data/*/landmarks:number'));
});

t.test('request summaries never show credentials', async (t) => {
  const line = describeRequest({
    method: 'POST',
    url: 'http://x/login',
    headers: { authorization: 'Basic c2VjcmV0', 'x-vendor-auth-token': 'tok', accept: 'application/json' },
    body: '{"username":"u","password":"hunter2"}',
  });
  t.notMatch(line, /hunter2|c2VjcmV0|tok\b/);
  t.match(line, /accept: application\/json/);
  t.match(describeRequest({ method: 'POST', url: 'http://x', headers: {}, body: 'userid=a&passwd=hunter2' }), /passwd=\*\*\*/);
});

t.test('scenario files: every one in conformance/scenarios is valid; a broken one is refused with its pointers', async (t) => {
  const all = loadScenarios();
  t.ok(all.length >= 8);
  for (const s of all) {
    for (const step of s.steps) {
      if (step.request) t.ok(specs.find(step.request.operationId), `${s.name}: ${step.request.operationId} exists`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'portolan-scenario-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'broken.yaml');
  writeFileSync(
    file,
    'name: Broken Name\ndescription: x\nrequires: { interfaces: [mapping] }\nsteps:\n  - name: s\n    request: { operationId: listCharts, bogus: 1 }\n',
  );
  t.throws(
    () => loadScenario(file),
    /\/name must match pattern[\s\S]*\/requires must have required property 'destructive'[\s\S]*\/steps\/0\/request must NOT have additional properties 'bogus'/,
  );
});

t.test('a polling step asks again while the answer says "not yet", and captures can pick an id out of a URL', async (t) => {
  let reads = 0;
  const server = createServer((req, res) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST')
      return json(201, { id: 'abc123', variables: {}, expiresAt: '2030-01-01T00:00:00Z' }, { Location: '/access/sessions/abc123' });
    if (req.url === '/access/sessions/abc123' && ++reads < 3) return json(404, { error: 'session not found', 'error-message': 'not yet' });
    if (req.url === '/access/sessions/abc123')
      return json(200, { id: 'abc123', variables: { ready: 'yes' }, expiresAt: '2030-01-01T00:00:00Z' });
    return json(404, { error: 'session not found', 'error-message': 'unknown' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'portolan-scenario-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const scenario = (name: string, max: number) => `name: ${name}
description: polls
requires: { interfaces: [access-session], destructive: false }
steps:
  - name: create
    request: { operationId: createAccessSession, auth: false, bodyExample: directoryOnly }
    expect: { status: 201 }
    capture:
      id: { from: 'header:location', match: 'sessions/([^/]+)$' }
  - name: wait until it is there
    request: { operationId: getAccessSession, auth: false, params: { sessionId: '\${id}' } }
    poll: { every: 10, max: ${max}, while: { status: 404 } }
    expect: { status: 200, body: { /variables/ready: 'yes' } }
`;
  writeFileSync(join(dir, 'poll-ok.yaml'), scenario('poll-ok', 5));
  const ok = await runConformance({
    targets: { '*': url },
    interfaces: ['access-session'],
    scenariosDir: dir,
    scenarios: ['poll-ok'],
    fuzzRuns: 0,
    env: {},
  });
  t.match(ok.scenarios[0], { outcome: 'pass', steps: [{ status: 201 }, { status: 200, requests: 3 }] }, 'two "not yet" answers, then done');

  reads = 0;
  writeFileSync(join(dir, 'poll-short.yaml'), scenario('poll-short', 2));
  const short = await runConformance({
    targets: { '*': url },
    interfaces: ['access-session'],
    scenariosDir: dir,
    scenarios: ['poll-short'],
    fuzzRuns: 0,
    env: {},
  });
  t.match(short.scenarios[0], {
    outcome: 'fail',
    steps: [{}, { requests: 2, violations: [{ check: 'expectation', message: /still not done after 2 requests 10 ms apart/ }] }],
  });
});
