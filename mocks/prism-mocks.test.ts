import t from 'tap';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { INTERFACES, listOperations, loadSpec } from '../src/lib/spec-catalog.ts';
import type { TapTest } from '../src/lib/tap-test.ts';
import { startPrismMocks } from './prism-mocks.ts';
import { sweepOperations, type SweepResult } from './operation-sweep.ts';
import { PRISM_DYNAMIC_DEVIATIONS, PRISM_DYNAMIC_SEED, PRISM_STATIC_DEVIATIONS, type PrismDeviation } from './prism-deviations.ts';

const EPHEMERAL = Object.fromEntries(ROLE_NAMES.map((role) => [role, 0])) as Record<RoleName, number>;
const NAMES = INTERFACES.map((i) => i.name);

/** Each answer conforms, or breaks the spec exactly as recorded; every recorded deviation still happens. */
function assertDeviations(t: TapTest, results: SweepResult[], known: Readonly<Record<string, PrismDeviation>>) {
  const expectedCalls = NAMES.flatMap((n) =>
    listOperations(loadSpec(n)).flatMap((op) => op.roles.map((role) => `${role} ${op.operationId}`)),
  );
  t.same(
    [...new Set(results.map((r) => r.key.split(' ').slice(0, 2).join(' ')))],
    expectedCalls,
    'every operation was called on every role that serves it',
  );
  for (const result of results) {
    t.same(result.violations, known[result.key]?.violations ?? [], `${result.key} -> ${result.status} ${result.contentType}`);
  }
  t.same(
    Object.keys(known).filter((key) => !results.some((r) => r.key === key)),
    [],
    'every recorded deviation was exercised',
  );
}

// One fleet for everything: Prism takes `Prefer: dynamic=true` per request, and the seed only
// matters to generated answers, so the static and the dynamic sweep share the slow start.
t.test('Prism mocks of all eight specs', async (t) => {
  const mocks = await startPrismMocks({ ports: EPHEMERAL, logLevel: 'error', seed: PRISM_DYNAMIC_SEED });
  t.teardown(() => mocks.stop());

  t.test('every role is listening and lists the specs it serves', async (t) => {
    t.same(
      mocks.roles.map((r) => r.role),
      ROLE_NAMES,
    );
    const gateway = mocks.roles.find((r) => r.role === 'gateway')!;
    t.same(gateway.interfaces, ['client-registration', 'rate-limit', 'health', 'access-session', 'mapping']);
    t.same(gateway.viaPool, ['mapping']);
    t.same(mocks.roles.find((r) => r.role === 'login')!.interfaces, ['snapshots', 'health']);
  });

  t.test('serving the named examples, every operation answers as its spec says (recorded deviations aside)', async (t) => {
    assertDeviations(t, await sweepOperations(NAMES, (role) => mocks.url(role)), PRISM_STATIC_DEVIATIONS);
  });

  t.test('generating answers, Prism breaks the specs exactly where recorded', async (t) => {
    assertDeviations(t, await sweepOperations(NAMES, (role) => mocks.url(role), { prefer: 'dynamic=true' }), PRISM_DYNAMIC_DEVIATIONS);
  });

  t.test('a diagnostics answer comes as JSON when the Accept header asks for it', async (t) => {
    const response = await fetch(`${mocks.url('diagnostics')}/snapshot-analyzer/api/snapshots`, {
      headers: { accept: 'application/vnd.vendor.diagnostics.api+json', cookie: 'ssosession=example' },
    });
    t.equal(response.status, 200);
    t.equal(response.headers.get('content-type'), 'application/vnd.vendor.diagnostics.api+json');
    t.type(await response.json(), 'object');
  });

  t.test('Prefer: code=404 picks the declared error example', async (t) => {
    const response = await fetch(`${mocks.url('mapping')}/api/charts/chart_404`, { headers: { prefer: 'code=404' } });
    t.equal(response.status, 404);
    t.match(await response.json(), { status: 'error', message: String });
  });

  t.test('the gateway passes the mapping API on to the mapping mock, like the reference gateway', async (t) => {
    const viaGateway = await fetch(`${mocks.url('gateway')}/api/charts`, { headers: { authorization: 'Bearer example-token' } });
    const direct = await fetch(`${mocks.url('mapping')}/api/charts`);
    t.equal(viaGateway.status, 200);
    t.same(await viaGateway.json(), await direct.json());
  });

  t.test("a path no spec serves on the role answers 404 in Prism's problem shape", async (t) => {
    const response = await fetch(`${mocks.url('mapping')}/no/such/path`);
    t.equal(response.status, 404);
    t.equal(response.headers.get('content-type'), 'application/problem+json');
    t.match(await response.json(), {
      type: 'https://stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR',
      status: 404,
      detail: /no\/such\/path/,
    });
  });

  t.test('an operation of another role is not answered here, though its spec is mocked', async (t) => {
    const login = await fetch(`${mocks.url('login')}/snapshot-analyzer/api/snapshots`, { headers: { cookie: 'ssosession=example' } });
    t.equal(login.status, 404, 'the snapshot list lives on the diagnostics role');
    await login.body?.cancel();
    const diagnostics = await fetch(`${mocks.url('diagnostics')}/resource/loginAction.jsp`, { method: 'POST' });
    t.equal(diagnostics.status, 404, 'the login form lives on the login role');
    await diagnostics.body?.cancel();
  });

  t.test('a method the path does not serve answers 405 with Allow', async (t) => {
    const response = await fetch(`${mocks.url('mapping')}/api/charts`, { method: 'DELETE' });
    t.equal(response.status, 405);
    t.equal(response.headers.get('allow'), 'GET, POST');
    t.match(await response.json(), { type: 'https://stoplight.io/prism/errors#NO_METHOD_MATCHED_ERROR' });
  });
});
