import t from 'tap';
import { diagnosticsUrlFor } from './module.ts';
import { createAccountStore } from '../../accounts/account-store.ts';
import { createBasicAuthenticator } from '../../accounts/basic-auth.ts';
import { ACCOUNT_MIGRATIONS } from '../../accounts/migrations.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import type { HandlerRequest } from '../../server/handler-types.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { createCredentialCheck, createLoginHandler, loginCookies, sessionScheme, type CookieOptions, type CredentialCheck } from './login-handlers.ts';
import { SNAPSHOT_MIGRATIONS } from './migrations.ts';
import { createSessionStore } from './session-store.ts';

const LIST = 'http://127.0.0.1:8300/snapshot-analyzer/api/snapshots';
const HOST_ONLY: CookieOptions = { domain: '', secure: false, lifetimeSeconds: 28_800 };

async function sessionsFor(t: TapTest) {
  const db = await openDatabase(tempSqliteUrl(t).url, { migrations: SNAPSHOT_MIGRATIONS });
  t.teardown(() => db.close());
  const clock = createFakeClock();
  return { clock, sessions: createSessionStore(db, { clock, lifetimeSeconds: 28_800, idleSeconds: 1800 }) };
}

/** A login request as the framework hands it over: routed, the form parsed and validated. */
function loginRequest(body: { userid: string; passwd: string }, headers: Record<string, string> = {}): HandlerRequest {
  return {
    operationId: 'loginDiagnosticsUser', role: 'login', method: 'POST', path: '/resource/loginAction.jsp',
    params: {}, query: {}, headers, cookies: {}, body, rawBody: undefined, remoteAddress: '127.0.0.1', requestId: 'r1',
  };
}

/** alice / alice pw is the one user; every other pair is refused. */
const onlyAlice: CredentialCheck = async (userid, passwd) => (userid === 'alice' && passwd === 'alice pw' ? 'diagnostics/alice' : undefined);

t.test('a good login is a 302 to the snapshot list with the session cookie and sso_completed=1, and no body', async (t) => {
  const { sessions } = await sessionsFor(t);
  const { loginDiagnosticsUser } = createLoginHandler({ sessions, checkCredentials: onlyAlice, cookie: HOST_ONLY, location: () => LIST });
  const answer = await loginDiagnosticsUser(loginRequest({ userid: 'alice', passwd: 'alice pw' }));
  t.equal(answer.status, 302);
  t.equal(answer.body, undefined, 'the spec declares no content for the 302');
  t.equal(answer.headers?.location, LIST);
  const cookies = answer.headers?.['set-cookie'] as string[];
  t.equal(cookies.length, 2, 'Set-Cookie twice');
  const token = /^ssosession=([A-Za-z0-9_-]{43}); /.exec(cookies[0]!)?.[1];
  t.ok(token, 'the session cookie comes first, 256 bits in base64url');
  t.same(cookies, [`ssosession=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=28800`, 'sso_completed=1; Path=/; SameSite=Lax; Max-Age=28800'], 'exactly the spec\'s "Session design"');
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
  const { loginDiagnosticsUser } = createLoginHandler({ sessions: counting, checkCredentials: onlyAlice, cookie: HOST_ONLY, location: () => LIST });
  const xml = await loginDiagnosticsUser(loginRequest({ userid: 'alice', passwd: 'secret-guess' }));
  t.same(xml, { status: 401, body: '<error><code>401</code><message>Invalid user id or password.</message></error>', contentType: 'application/vnd.vendor.diagnostics.api+xml' }, 'XML without Accept; no headers at all');
  const json = await loginDiagnosticsUser(loginRequest({ userid: 'mallory', passwd: 'secret-guess' }, { accept: 'application/vnd.vendor.diagnostics.api+json' }));
  t.same(json, { status: 401, body: { code: 401, message: 'Invalid user id or password.' }, contentType: 'application/vnd.vendor.diagnostics.api+json' });
  t.notMatch(JSON.stringify([xml, json]), /alice|mallory|secret-guess/, 'neither user id nor password is repeated');
  t.equal(created, 0, 'no session was created');
});

t.test('the session scheme: missing and unknown sessions are 403 with their own messages; a live one names the account', async (t) => {
  const { sessions, clock } = await sessionsFor(t);
  const scheme = sessionScheme(sessions);
  const headers = {};
  t.same(await scheme({ headers, cookies: {} }), { ok: false, error: { code: 'forbidden', message: 'A session is required; log in first.' }, presented: false });
  t.same(await scheme({ headers, cookies: { ssosession: '' } }), { ok: false, error: { code: 'forbidden', message: 'A session is required; log in first.' }, presented: false }, 'an empty cookie is no session');
  t.same(await scheme({ headers, cookies: { sso_completed: '1' } }), { ok: false, error: { code: 'forbidden', message: 'A session is required; log in first.' }, presented: false }, 'sso_completed alone opens nothing');
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

  t.test("repeated failures back off per user name and address; another address is not slowed", async (t) => {
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

t.test('the redirect after a login keeps the host name the login was reached by, with the diagnostics port', async (t) => {
  // The session cookie has no Domain: it comes back only to the same host name.
  t.equal(diagnosticsUrlFor('localhost:8301', 'http://127.0.0.1:8300'), 'http://localhost:8300');
  t.equal(diagnosticsUrlFor('diag.example.net', 'http://127.0.0.1:8300'), 'http://diag.example.net:8300');
  t.equal(diagnosticsUrlFor('[::1]:8301', 'http://127.0.0.1:8300'), 'http://[::1]:8300');
  t.equal(diagnosticsUrlFor(undefined, 'http://127.0.0.1:8300'), 'http://127.0.0.1:8300', 'no Host: the listening address');
  t.equal(diagnosticsUrlFor('evil.example/<x>', 'http://127.0.0.1:8300'), 'http://127.0.0.1:8300', 'not a host name: the listening address');
});
