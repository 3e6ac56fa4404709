import t from 'tap';
import { loadAuthData } from './data-files.ts';
import { applyHints, CAUSES, hintsOf, type HintContext } from './hints.ts';
import { formatViolation, type OperationResult, type ProbeResult, type ScenarioResult, type Violation } from './model.ts';

// Each cause of the table, on results built by hand: it holds when its pattern is complete, and not
// when one answer breaks the pattern. The CLI tests (hints-cli.test.ts) show the hints on real targets.

const authData = loadAuthData();

const violation = (iface: string, operationId: string, message: string): Violation => ({
  interface: iface,
  operationId,
  check: 'status',
  pointer: '',
  message,
});
const probe = (kind: ProbeResult['kind'], status: number, failing: Violation | undefined): ProbeResult => ({
  id: `${kind} ${status}`,
  kind,
  name: 'example',
  status,
  outcome: failing ? 'fail' : 'pass',
  violations: failing ? [failing] : [],
});
function operation(
  iface: string,
  operationId: string,
  statuses: number[],
  options: { fails?: boolean; outcome?: OperationResult['outcome'] } = {},
): OperationResult {
  const probes = statuses.map((s) =>
    probe('valid', s, options.fails ? violation(iface, operationId, `status ${s} is not declared`) : undefined),
  );
  return {
    interface: iface,
    operationId,
    method: 'GET',
    path: '/x',
    role: 'device',
    outcome: options.outcome ?? (options.fails ? 'fail' : 'pass'),
    probes,
  };
}

/** device-config's operations need the admin credential; registerClient and the logins none. */
function context(configured: string[] = ['admin']): HintContext {
  return {
    registrationHost: { value: 'localhost:8080', variable: 'registrationHost' },
    credentialsOf: (_iface, operationId) => (operationId.startsWith('login') || operationId === 'registerClient' ? [] : ['admin']),
    interfaceOf: (operationId) => (operationId === 'registerClient' ? 'client-registration' : 'device-config'),
    credentials: authData.credentials,
    configured: new Set(configured),
  };
}

const scenario = (operationId: string, status: number): ScenarioResult => ({
  name: 's',
  file: 's.yaml',
  description: 's',
  outcome: 'fail',
  steps: [
    {
      id: 's1',
      name: 'step 1',
      operationId,
      status,
      requests: 1,
      outcome: 'fail',
      violations: [{ interface: 'x', operationId, check: 'expectation', pointer: '', message: `expected status 200, got ${status}` }],
    },
  ],
});

t.test('the table has one entry per known cause', async (t) => {
  t.same(
    CAUSES.map((c) => c.name),
    ['session-cookie-missing', 'registration-host', 'credentials-refused'],
  );
});

t.test('session-cookie-missing: a login that never set its session cookie explains the refusals, not the credentials', async (t) => {
  const list = operation('snapshots', 'listSnapshots', [401], { fails: true });
  const get = operation('snapshots', 'getSnapshot', [401], { fails: true });
  const rule = operation('device-config', 'createRule', [401], { fails: true });
  const ctx: HintContext = {
    ...context(),
    loginNotes: [{ scheme: 'ssoSession', operationId: 'loginDiagnosticsUser', cookie: 'ssosession', set: ['sso_completed'] }],
    schemesOf: (operationId) => (operationId === 'createRule' ? ['basicAuth'] : ['ssoSession']),
  };
  const findings = applyHints([list, get, rule], [], ctx);
  t.same(
    findings.map((f) => f.cause),
    ['session-cookie-missing', 'credentials-refused', 'credentials-refused'],
  );
  const hint =
    'every authenticated snapshots operation was refused (401/403): the login loginDiagnosticsUser set only sso_completed, not the ssosession cookie the ssoSession scheme sends, so no request carried a session';
  t.equal(list.probes[0]!.violations[0]!.hint, hint, 'the first cause of the table wins: the cookie, not the credentials');
  t.match(
    rule.probes[0]!.violations[0]!.hint,
    /check the 'admin' credential/,
    'an interface without that scheme keeps the credentials hint',
  );

  const again = operation('snapshots', 'listSnapshots', [401], { fails: true });
  applyHints([again], [], { ...ctx, prismMock: true });
  t.match(
    again.probes[0]!.violations[0]!.hint,
    /; the Prism mock answers the login with the spec's one Set-Cookie example, which holds no ssosession cookie/,
    'on a Prism mock, it says why the cookie is missing',
  );

  const set = operation('snapshots', 'listSnapshots', [401], { fails: true });
  applyHints([set], [], { ...ctx, loginNotes: [{ ...ctx.loginNotes![0]!, set: ['sso_completed', 'ssosession'] }] });
  t.match(set.probes[0]!.violations[0]!.hint, /check the 'admin' credential/, 'a login that set the cookie: the credentials again');
});

t.test('registration-host: every registration request answered 404 names the Host sent and the --var that sets it', async (t) => {
  const register = operation('client-registration', 'registerClient', [404, 404], { fails: true });
  const steps = scenario('registerClient', 404);
  const findings = applyHints([register], [steps], context());
  t.same(
    findings.map((f) => f.cause),
    ['registration-host'],
  );
  const line = formatViolation(register.probes[0]!.violations[0]!);
  t.match(
    line,
    /^client-registration registerClient: status at \(root\): status 404 is not declared — hint: every registration request \(sent with Host localhost:8080\) was answered 404: registration is routed by Host; pass --var registrationHost=<the target's registration host>, or set the target's registration host to it \(on the reference gateway PORTOLAN_REGISTRATION_HOST/,
  );
  t.match(steps.steps[0]!.violations[0]!.hint, /sent with Host localhost:8080/, 'the failing scenario step carries it too');
  t.same(
    hintsOf({ operations: [register], scenarios: [steps] }).map((h) => h.lines),
    [3],
    'listed once in the summary, with the lines it explains',
  );
});

t.test('registration-host does not hold when one registration request got another answer', async (t) => {
  const register = operation('client-registration', 'registerClient', [404, 403], { fails: true });
  t.same(applyHints([register], [], context()), []);
  t.equal(register.probes[0]!.violations[0]!.hint, undefined);
});

t.test('credentials-refused: every authenticated operation of an interface refused names the variables, never a value', async (t) => {
  const info = operation('device-config', 'getDeviceInfo', [401], { outcome: 'skipped' });
  info.reason = 'the credentials were refused';
  const rule = operation('device-config', 'createRule', [401], { fails: true });
  const login = operation('device-config', 'loginDeviceUser', [200]); // no credential: not part of the pattern
  const steps = scenario('createRule', 403);
  const findings = applyHints([info, rule, login], [steps], context());
  t.same(
    findings.map((f) => f.cause),
    ['credentials-refused'],
  );
  const hint =
    "every authenticated device-config operation was refused (401/403): check the 'admin' credential the engine sends, from CONFORMANCE_ADMIN_USER / CONFORMANCE_ADMIN_PASSWORD (else PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD) (it must be an account the target accepts)";
  t.equal(rule.probes[0]!.violations[0]!.hint, hint, 'on the failing check');
  t.equal(info.hint, hint, 'on the skipped operation');
  t.equal(steps.steps[0]!.violations[0]!.hint, hint, 'on the failing scenario step');
  t.equal(login.hint, undefined);
});

t.test('credentials-refused says when the credential is not set at all', async (t) => {
  const rule = operation('device-config', 'createRule', [401], { fails: true });
  applyHints([rule], [], context([]));
  t.match(
    rule.probes[0]!.violations[0]!.hint,
    /the 'admin' credential is not set: set CONFORMANCE_ADMIN_USER \/ CONFORMANCE_ADMIN_PASSWORD/,
  );
});

t.test('credentials-refused does not hold when one authenticated operation was answered', async (t) => {
  const rule = operation('device-config', 'createRule', [401], { fails: true });
  const info = operation('device-config', 'getDeviceInfo', [200]);
  t.same(applyHints([rule, info], [], context()), []);
  t.equal(rule.probes[0]!.violations[0]!.hint, undefined);
});
