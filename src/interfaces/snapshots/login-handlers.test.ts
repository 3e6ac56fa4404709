import t from 'tap';
import { createAccountStore } from '../../accounts/account-store.ts';
import { createBasicAuthenticator } from '../../accounts/basic-auth.ts';
import { ACCOUNT_MIGRATIONS } from '../../accounts/migrations.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { isFailure, type Handler, type HandlerRequest, type HandlerResponse } from '../../server/handler-types.ts';
import { openDatabase } from '../../stores/open-database.ts';
import {
  createCredentialCheck,
  createLoginHandler,
  loginCookies,
  sessionScheme,
  type CookieOptions,
  type CredentialCheck,
} from './login-handlers.ts';
import { diagnosticsLinkBase, diagnosticsUrlFor, reachableUrl } from './diagnostics-url.ts';
import { renderSnapshotsError } from './error-shape.ts';
import type { DiagnosticsSite } from './diagnostics-site.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSessionStore } from './session-store.ts';

const LIST = 'http://127.0.0.1:8300/snapshot-analyzer/api/snapshots';
const HOST_ONLY: CookieOptions = { domain: '', secure: false, lifetimeSeconds: 28_800 };
/** The roles on loopback at 8301 (login) and 8300 (diagnostics), host-only cookies, no proxy in front. */
const SITE: DiagnosticsSite = {
  listenerNames: ['localhost', '127.0.0.1', '[::1]', 'diag-box'],
  listenerPorts: () => [8301, 8300],
  cookieDomain: '',
  secure: false,
  publicUrl: '',
};

async function sessionsFor(t: TapTest) {
  const db = await openDatabase(tempSqliteUrl(t).url, { migrations: SNAPSHOT_MIGRATIONS });
  t.teardown(() => db.close());
  const clock = createFakeClock();
  return { clock, sessions: createSessionStore(db, { clock, lifetimeSeconds: 28_800, idleSeconds: 1800 }) };
}

/** A login request as the framework hands it over: routed, the form parsed and validated. */
function loginRequest(body: { userid: string; passwd: string }, headers: Record<string, string> = {}): HandlerRequest {
  return {
    operationId: 'loginDiagnosticsUser',
    role: 'login',
    method: 'POST',
    path: '/resource/loginAction.jsp',
    params: {},
    query: {},
    headers,
    cookies: {},
    body,
    rawBody: undefined,
    remoteAddress: '127.0.0.1',
    requestId: 'r1',
  };
}

/** The handler's answer as the role app writes it: a refusal (a registry failure) in C's error shape, with the refusal's headers. */
async function onWire(handler: Handler, request: HandlerRequest): Promise<HandlerResponse> {
  const outcome = await handler(request);
  if (!isFailure(outcome)) return outcome;
  const rendered = renderSnapshotsError(outcome.error, request);
  return outcome.headers ? { ...rendered, headers: { ...rendered.headers, ...outcome.headers } } : rendered;
}

/** alice / alice pw is the one user; every other pair is refused. */
const onlyAlice: CredentialCheck = async (userid, passwd) =>
  userid === 'alice' && passwd === 'alice pw' ? 'diagnostics/alice' : undefined;

t.test('a good login is a 302 to the snapshot list with the session cookie and sso_completed=1, and no body', async (t) => {
  const { sessions } = await sessionsFor(t);
  const { loginDiagnosticsUser } = createLoginHandler({
    sessions,
    checkCredentials: onlyAlice,
    cookie: HOST_ONLY,
    site: SITE,
    location: () => LIST,
  });
  const answer = await onWire(loginDiagnosticsUser, loginRequest({ userid: 'alice', passwd: 'alice pw' }));
  t.equal(answer.status, 302);
  t.equal(answer.body, undefined, 'the spec declares no content for the 302');
  t.equal(answer.headers?.location, LIST);
  const cookies = answer.headers?.['set-cookie'] as string[];
  t.equal(cookies.length, 2, 'Set-Cookie twice');
  const token = /^ssosession=([A-Za-z0-9_-]{43}); /.exec(cookies[0]!)?.[1];
  t.ok(token, 'the session cookie comes first, 256 bits in base64url');
  t.same(
    cookies,
    [`ssosession=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=28800`, 'sso_completed=1; Path=/; SameSite=Lax; Max-Age=28800'],
    'exactly the spec\'s "Session design"',
  );
  t.equal(await sessions.verify(token!), 'diagnostics/alice', 'the cookie opens a session of the account the check named');
});

t.test('Domain and Secure are added when configured, to both cookies', async (t) => {
  t.same(loginCookies('tok', { domain: 'example.com', secure: true, lifetimeSeconds: 60 }), [
    'ssosession=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Domain=example.com; Secure',
    'sso_completed=1; Path=/; SameSite=Lax; Max-Age=60; Domain=example.com; Secure',
  ]);
  t.same(loginCookies('tok', { domain: 'example.com', secure: false, lifetimeSeconds: 60 }), [
    'ssosession=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Domain=example.com',
    'sso_completed=1; Path=/; SameSite=Lax; Max-Age=60; Domain=example.com',
  ]);
  t.same(loginCookies('tok', { domain: '', secure: true, lifetimeSeconds: 60 }), [
    'ssosession=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure',
    'sso_completed=1; Path=/; SameSite=Lax; Max-Age=60; Secure',
  ]);
});

t.test('a refused login is one 401 in the error shape by Accept, with no cookie, repeating nothing', async (t) => {
  const { sessions } = await sessionsFor(t);
  let created = 0;
  const counting = { ...sessions, create: (account: string) => (created++, sessions.create(account)) };
  const { loginDiagnosticsUser } = createLoginHandler({
    sessions: counting,
    checkCredentials: onlyAlice,
    cookie: HOST_ONLY,
    site: SITE,
    location: () => LIST,
  });
  t.match(
    await loginDiagnosticsUser(loginRequest({ userid: 'alice', passwd: 'secret-guess' })),
    { error: { code: 'unauthorized' } },
    'the handler refuses with a registry failure',
  );
  const xml = await onWire(loginDiagnosticsUser, loginRequest({ userid: 'alice', passwd: 'secret-guess' }));
  t.same(
    xml,
    {
      status: 401,
      body: '<error><code>401</code><message>Invalid user id or password.</message></error>',
      contentType: 'application/vnd.vendor.diagnostics.api+xml',
    },
    'XML without Accept; no headers at all',
  );
  const json = await onWire(
    loginDiagnosticsUser,
    loginRequest({ userid: 'mallory', passwd: 'secret-guess' }, { accept: 'application/vnd.vendor.diagnostics.api+json' }),
  );
  t.same(json, {
    status: 401,
    body: { code: 401, message: 'Invalid user id or password.' },
    contentType: 'application/vnd.vendor.diagnostics.api+json',
  });
  t.notMatch(JSON.stringify([xml, json]), /alice|mallory|secret-guess/, 'neither user id nor password is repeated');
  t.equal(created, 0, 'no session was created');
});

t.test('the session scheme: missing and unknown sessions are 403 with their own messages; a live one names the account', async (t) => {
  const { sessions, clock } = await sessionsFor(t);
  const scheme = sessionScheme(sessions);
  const headers = {};
  t.same(await scheme({ headers, cookies: {} }), {
    ok: false,
    error: { code: 'forbidden', message: 'A session is required; log in first.' },
    presented: false,
  });
  t.same(
    await scheme({ headers, cookies: { ssosession: '' } }),
    { ok: false, error: { code: 'forbidden', message: 'A session is required; log in first.' }, presented: false },
    'an empty cookie is no session',
  );
  t.same(
    await scheme({ headers, cookies: { sso_completed: '1' } }),
    { ok: false, error: { code: 'forbidden', message: 'A session is required; log in first.' }, presented: false },
    'sso_completed alone opens nothing',
  );
  const unknown = { ok: false, error: { code: 'forbidden', message: 'The session is unknown or expired; log in again.' }, presented: true };
  t.same(await scheme({ headers, cookies: { ssosession: 'bogus' } }), unknown);
  t.same(await scheme({ headers, cookies: { ssosession: 'x'.repeat(1000) } }), unknown, 'an over-long cookie');
  const { token } = await sessions.create('admin/admin');
  t.same(await scheme({ headers, cookies: { ssosession: token, sso_completed: '1' } }), { ok: true, principal: 'admin/admin' });
  clock.advance(1800 * 1000);
  t.same(await scheme({ headers, cookies: { ssosession: token } }), unknown, 'idle past the idle time');
});

t.test('the credential check', async (t) => {
  const db = await openDatabase(tempSqliteUrl(t).url, { migrations: ACCOUNT_MIGRATIONS });
  t.teardown(() => db.close());
  const clock = createFakeClock();
  const accounts = createAccountStore(db, { clock });
  await accounts.setPassword('admin', 'admin', 'admin pw');
  await accounts.setPassword('analysts', 'alice', 'alice pw');
  await accounts.setPassword('analysts', 'a', 'b:c');
  await accounts.setPassword('analysts', 'both', 'diagnostics pw');
  await accounts.setPassword('admin', 'both', 'admin pw');
  const backoff = { failuresBeforeBackoff: 5 };
  const check = createCredentialCheck({
    diagnostics: createBasicAuthenticator(accounts, 'analysts', { clock, backoff }),
    admin: createBasicAuthenticator(accounts, 'admin', { clock, backoff }),
    accounts,
    diagnosticsProfile: 'analysts',
  });

  t.test('users of the diagnostics access profile and the administrative account log in as their account keys', async (t) => {
    t.equal(await check('alice', 'alice pw', '10.0.0.1'), 'diagnostics/alice', 'the key says diagnostics whatever the profile is called');
    t.equal(await check('admin', 'admin pw', '10.0.0.1'), 'admin/admin');
    t.equal(await check('both', 'diagnostics pw', '10.0.0.1'), 'diagnostics/both', 'in both profiles: a diagnostics user');
    t.equal(await check('both', 'admin pw', '10.0.0.1'), undefined, '... checked only there');
  });

  t.test('a wrong password, an unknown user and a user id with a colon are all undefined', async (t) => {
    t.equal(await check('alice', 'wrong', '10.0.0.2'), undefined);
    t.equal(await check('admin', 'alice pw', '10.0.0.2'), undefined);
    t.equal(await check('nobody', 'alice pw', '10.0.0.2'), undefined);
    t.equal(await check('alice:alice', 'pw', '10.0.0.2'), undefined);
    t.equal(await check('a:b', 'c', '10.0.0.2'), undefined, "not user a with password b:c (basic authentication's split)");
    t.equal(await check('a', 'b:c', '10.0.0.2'), 'diagnostics/a', 'a password may hold colons');
  });

  t.test('repeated failures back off per user name and address; another address is not slowed', async (t) => {
    for (let i = 0; i < 5; i++) t.equal(await check('alice', `guess ${i}`, '10.0.0.3'), undefined);
    t.equal(await check('alice', 'alice pw', '10.0.0.3'), undefined, 'past the free failures even the right password waits');
    t.equal(await check('alice', 'alice pw', '10.0.0.4'), 'diagnostics/alice', 'from elsewhere alice logs in');
    clock.advance(1000);
    t.equal(await check('alice', 'alice pw', '10.0.0.3'), 'diagnostics/alice', 'after the wait');
  });

  t.test("an administrator's logins never count against diagnostics users on the same address", async (t) => {
    // A minute apart, so a name's backoff never blocks: had each admin login also been a failed
    // diagnostics check, the address would be past its budget (4 x 5 failures) and alice refused.
    for (let i = 0; i < 30; i++) {
      clock.advance(61_000);
      t.equal(await check('admin', 'admin pw', '10.0.0.5'), 'admin/admin');
    }
    t.equal(await check('alice', 'alice pw', '10.0.0.5'), 'diagnostics/alice');
  });
});

t.test('a login a browser posted from another site is one 403 in the error shape before any credential check', async (t) => {
  const { sessions } = await sessionsFor(t);
  let checked = 0;
  const counting: CredentialCheck = (...args) => (checked++, onlyAlice(...args));
  const { loginDiagnosticsUser } = createLoginHandler({
    sessions,
    checkCredentials: counting,
    cookie: HOST_ONLY,
    site: SITE,
    location: () => LIST,
  });
  const json = await onWire(
    loginDiagnosticsUser,
    loginRequest(
      { userid: 'alice', passwd: 'alice pw' },
      { origin: 'https://evil.example', accept: 'application/vnd.vendor.diagnostics.api+json' },
    ),
  );
  t.same(
    json,
    {
      status: 403,
      body: {
        code: 403,
        message:
          'Login refused: the request comes from another site (Origin, Referer or Sec-Fetch-Site). Log in from a page of this service or from a script.',
      },
      contentType: 'application/vnd.vendor.diagnostics.api+json',
    },
    'no headers, no cookie',
  );
  t.equal(checked, 0, 'the credentials were not looked at');
  const own = await onWire(
    loginDiagnosticsUser,
    loginRequest({ userid: 'alice', passwd: 'alice pw' }, { origin: 'http://localhost:8301', host: 'localhost:8301' }),
  );
  t.equal(own.status, 302, 'from its own origin');
});

t.test('the redirect after a login keeps a listed host name the login was reached by, with the diagnostics port', async (t) => {
  // The session cookie has no Domain: it comes back only to the same host name.
  const listening = 'http://127.0.0.1:8300';
  t.equal(diagnosticsUrlFor(SITE, 'localhost:8301', listening), 'http://localhost:8300');
  t.equal(diagnosticsUrlFor(SITE, 'Diag-Box:8300', listening), 'http://diag-box:8300', "the machine's name, lower case");
  t.equal(diagnosticsUrlFor(SITE, '[::1]:8301', listening), 'http://[::1]:8300');
  t.equal(diagnosticsUrlFor(SITE, undefined, listening), listening, 'no Host: the listening address');
  t.equal(diagnosticsUrlFor(SITE, 'diag.example.net', listening), listening, 'a name the site does not list: the listening address');
  t.equal(diagnosticsUrlFor(SITE, 'localhost', listening), listening, "a listed name at a port that is not a role's");
  t.equal(diagnosticsUrlFor(SITE, 'evil.example/<x>', listening), listening, 'not a host name: the listening address');
  const domain = { ...SITE, cookieDomain: 'example.com' };
  t.equal(diagnosticsUrlFor(domain, 'login.example.com', listening), 'http://login.example.com:8300', 'a name under the cookie domain');
  t.equal(diagnosticsUrlFor(domain, 'login.example.com.evil.net', listening), listening, 'a look-alike');
  t.equal(
    diagnosticsUrlFor({ ...domain, publicUrl: 'https://diag.example.com/base' }, 'localhost:8301', listening),
    'https://diag.example.com/base',
    'a public URL wins over every Host',
  );
});

t.test(
  'the diagnostics API links under a listed Host (a listener name at its port, a cookie-domain name as reached), else its own URL',
  async (t) => {
    const listening = 'http://127.0.0.1:8300';
    t.equal(
      diagnosticsLinkBase(SITE, 'localhost:8300', listening),
      'http://localhost:8300',
      'curl to localhost follows the Location with its cookie',
    );
    t.equal(
      diagnosticsLinkBase(SITE, 'localhost:8301', listening),
      'http://localhost:8300',
      'a listener name always at the diagnostics port',
    );
    t.equal(diagnosticsLinkBase(SITE, 'evil.example', listening), listening);
    t.equal(diagnosticsLinkBase(SITE, 'evil.example:8300', listening), listening);
    t.equal(diagnosticsLinkBase(SITE, undefined, listening), listening);
    const domain = { ...SITE, cookieDomain: 'example.com' };
    t.equal(
      diagnosticsLinkBase(domain, 'api.example.com:8443', listening),
      'http://api.example.com:8443',
      'a proxy in front: the port the client used',
    );
    t.equal(diagnosticsLinkBase(domain, 'api.example.com', listening), 'http://api.example.com');
    t.equal(diagnosticsLinkBase(domain, 'api.example.com.evil.net', listening), listening, 'a look-alike');
    t.equal(
      diagnosticsLinkBase({ ...domain, publicUrl: 'https://diag.example.com' }, 'api.example.com', listening),
      'https://diag.example.com',
      'a public URL wins',
    );
  },
);

t.test('a wildcard listener is no address to follow: redirects and links name the machine', async (t) => {
  t.equal(reachableUrl('http://0.0.0.0:8300', 'diag-box'), 'http://diag-box:8300');
  t.equal(reachableUrl('http://[::]:8300', 'diag-box'), 'http://diag-box:8300');
  t.equal(reachableUrl('http://127.0.0.1:8300', 'diag-box'), 'http://127.0.0.1:8300', 'a real address stays');
  t.equal(reachableUrl('http://0.0.0.0:8300', ''), 'http://0.0.0.0:8300', 'no machine name: as it listens');
});

t.test(
  'behind TLS (secure cookies) a link or redirect to a name under the cookie domain is https; the listeners themselves stay http',
  async (t) => {
    const listening = 'http://127.0.0.1:8300';
    const tls = { ...SITE, cookieDomain: 'example.com', secure: true };
    t.equal(diagnosticsLinkBase(tls, 'api.example.com', listening), 'https://api.example.com', 'a Secure cookie is sent to this link');
    t.equal(diagnosticsLinkBase(tls, 'api.example.com:8443', listening), 'https://api.example.com:8443');
    t.equal(diagnosticsUrlFor(tls, 'login.example.com', listening), 'https://login.example.com:8300', 'the login’s redirect too');
    t.equal(diagnosticsLinkBase(tls, 'localhost:8300', listening), 'http://localhost:8300', 'a listener name: as it listens');
    t.equal(diagnosticsLinkBase(tls, 'evil.example', listening), listening, 'an unlisted Host: the listening URL');
  },
);
