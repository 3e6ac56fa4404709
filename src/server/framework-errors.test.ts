import t from 'tap';
import { request as send } from 'undici';
import type tap from 'tap';
import { INTERFACES, loadSpec, type InterfaceName } from '../lib/spec-catalog.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES } from '../lib/roles.ts';
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { buildExampleRequest } from '../lib/contract/example-request.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';
import { startTestSystem } from '../app/test-system.ts';

// Every interface without handlers: the framework's own answers are under test here.
const noHandlers = Object.fromEntries(INTERFACES.map((i) => [i.name, {}]));
const { system } = await startTestSystem(t, { config: { bodyLimitBytes: 4096 }, handlers: noHandlers, openSecurity: true });
const docs = new Map(INTERFACES.map((i) => [i.name, loadSpec(i.name)]));

/** Asserts a JSON error body matches the first error schema of an interface. */
function assertErrorShape(t: Pick<typeof tap, 'ok'>, name: InterfaceName, body: unknown) {
  const doc = docs.get(name)!;
  const validate = createSpecValidator(doc).at(`/components/schemas/${(doc['x-portolan-error-schemas'] as string[])[0]}`);
  t.ok(validate(body), `${name} error shape: ${JSON.stringify(validate.errors)} for ${JSON.stringify(body)}`);
}

async function call(role: (typeof ROLE_NAMES)[number], path: string, init: RequestInit = {}) {
  const response = await fetch(`${system.url(role)}${path}`, { redirect: 'manual', ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

t.test("an unknown path answers 404 in the error shape of the role's own interface", async (t) => {
  // Not the gateway: it passes what it does not serve to its pool (src/gateway/gateway.test.ts).
  for (const role of ROLE_NAMES.filter((r) => r !== 'gateway')) {
    const accept = role === 'diagnostics' || role === 'login' ? { accept: 'application/vnd.vendor.diagnostics.api+json' } : undefined;
    const response = await call(role, '/no/such/path', accept ? { headers: accept } : {});
    t.equal(response.status, 404, `${role}: 404`);
    assertErrorShape(t, ROLE_DEFINITIONS[role].fallbackInterface, response.json());
  }
});

t.test("a wrong method answers 405 with Allow in the interface's shape", async (t) => {
  const response = await call('mapping', '/api/charts', { method: 'DELETE' });
  t.equal(response.status, 405);
  t.equal(response.headers.get('allow'), 'GET, POST, HEAD');
  t.match(response.json(), { status: 'error', message: /DELETE is not allowed/ });
});

t.test("an invalid request answers 400 naming each problem, in the interface's shape", async (t) => {
  const response = await call('mapping', '/api/charts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ landmarks: 'many', risk_level: 'Extreme' }),
  });
  t.equal(response.status, 400);
  const body = response.json();
  assertErrorShape(t, 'mapping', body);
  t.match(body.message, /name/, 'names the missing field');
  t.match(body.message, /landmarks/, 'names the wrong type');
  t.match(body.message, /Low, Medium, High, Unknown/, 'lists the allowed risk levels');
});

t.test('malformed JSON answers 400 without echoing the body', async (t) => {
  const response = await call('device', '/mgmt/tm/traffic/rule', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` },
    body: '{"name": "r", "password": "hunter2"',
  });
  t.equal(response.status, 400);
  t.same(response.json(), { code: 400, message: 'Found invalid JSON body in the request.', errorStack: [], apiError: 1 });
  t.notMatch(response.text, /hunter2/);
});

t.test('a body over the configured limit answers 413 and the server stays up', async (t) => {
  const response = await call('mapping', '/api/charts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x'.repeat(10_000) }),
  });
  t.equal(response.status, 413);
  assertErrorShape(t, 'mapping', response.json());
  t.equal((await call('mapping', '/no')).status, 404, 'still answering');
});

t.test("an operation without a handler answers 501 in its own interface's shape", async (t) => {
  for (const { name } of INTERFACES) {
    const runtime = await loadInterfaceRuntime(name);
    for (const op of runtime.operations) {
      const request = await buildExampleRequest(docs.get(name)!, op);
      const role = op.roles[0] as (typeof ROLE_NAMES)[number];
      // Registration is answered only with the configured Host (seed D); fetch cannot set Host.
      const host = op.operationId === 'registerClient' ? { host: system.config.registrationHost } : {};
      const headers = { ...request.headers, ...host, accept: 'application/vnd.vendor.diagnostics.api+json' };
      const response = await send(`${system.url(role)}${request.url}`, {
        method: request.method as 'GET',
        headers,
        ...(request.body ? { body: request.body } : {}),
      });
      const text = await response.body.text();
      t.equal(response.statusCode, 501, `${op.operationId}: 501 (${text.slice(0, 200)})`);
      assertErrorShape(t, name, JSON.parse(text));
    }
  }
});
