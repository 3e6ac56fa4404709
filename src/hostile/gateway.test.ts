import t from 'tap';
import { request as httpRequest } from 'node:http';
import { registerClient } from '../../generated/client-registration/sdk.gen.ts';
import { startTestSystem } from '../app/test-system.ts';
import { answered, appsOn, registrationClient } from '../interfaces/client-registration/fixtures/registration-test-kit.ts';

// The gateway role against hostile clients: the rate limiter (E) and client registration (D).

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One request with exactly these header fields after Host, repeated ones included (`[name, value, ...]`). */
function send(baseUrl: string, path: string, rawHeaders: string[] = [], method = 'GET', body?: string): Promise<Answer> {
  const { hostname, port, host } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // Given as a list, node adds no Host of its own.
    const req = httpRequest({ hostname, port, method, path, headers: ['Host', host, ...rawHeaders], agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('E-bearer-spellings: after a token reached its limit, no spelling of its Authorization header passes uncounted', async (t) => {
  // Before: `bearer T`, `Bearer  T`, `Bearer<TAB>T` and `Basic x Bearer T` were passed on uncounted (or counted
  // under another key) once `Bearer T` was limited; a second Authorization field was never looked at.
  const LIMIT = 3;
  const { system } = await startTestSystem(t, { config: { rateLimitLimit: LIMIT } });
  const gateway = system.url('gateway');
  const token = 'hostile-token.AbC~9';
  for (let i = 0; i < LIMIT; i++) t.equal((await send(gateway, '/api/vessels', ['Authorization', `Bearer ${token}`])).status, 200, `request ${i + 1} of the seed's form passes`);
  t.equal((await send(gateway, '/api/vessels', ['Authorization', `Bearer ${token}`])).status, 429, "the seed's form is limited");

  for (const spelling of [`bearer ${token}`, `BEARER ${token}`, `Bearer  ${token}`, `Bearer\t${token}`, `bEaReR \t  ${token}`]) {
    const answer = await send(gateway, '/api/vessels', ['Authorization', spelling]);
    t.equal(answer.status, 429, `${JSON.stringify(spelling.replace(token, 'T'))}: the same token, limited`);
    t.match(JSON.parse(answer.body), { 'x-rate-limit-remaining': 0 });
  }

  const malformed: Array<[string, string[]]> = [
    ['another scheme first', ['Authorization', `Basic x Bearer ${token}`]],
    ['Bearer with no token', ['Authorization', 'Bearer']],
    ['Bearer with spaces only', ['Authorization', 'Bearer   ']],
    ['a comma list', ['Authorization', `Bearer ${token}, Bearer other`]],
    ['a comma inside the token', ['Authorization', `Bearer ${token},x`]],
    ['a field after the token', ['Authorization', `Bearer ${token} extra`]],
    ['a no-break space', ['Authorization', `Bearer\u00a0${token}`]],
    ['a scheme glued to the token', ['Authorization', `Bearer${token}`]],
    ['a token of 5000 characters', ['Authorization', `Bearer ${'t'.repeat(5000)}`]],
    ['two fields, the first not Bearer', ['Authorization', 'Basic dXNlcjpwYXNz', 'Authorization', `Bearer ${token}`]],
    ['two fields, a fresh token first', ['Authorization', 'Bearer fresh', 'Authorization', `Bearer ${token}`]],
    ['two fields with different name case', ['authorization', 'Bearer fresh', 'AUTHORIZATION', `Bearer ${token}`]],
  ];
  for (const [what, headers] of malformed) {
    const answer = await send(gateway, '/api/vessels', headers);
    t.equal(answer.status, 400, `${what}: 400`);
    t.equal(answer.headers['www-authenticate'], 'Bearer error="invalid_request"', `${what}: the RFC 6750 challenge`);
    const body = JSON.parse(answer.body) as Record<string, string>;
    t.same(Object.keys(body), ['error', 'error-message'], `${what}: in the gateway's shape`);
    t.equal(body.error, 'invalid request');
    t.notMatch(answer.body, /hostile-token|fresh|dXNlcjpwYXNz|tttt/, `${what}: nothing of the header repeated`);
  }

  const status = await send(gateway, '/rate_limit_status', ['Authorization', `Basic x Bearer ${token}`]);
  t.equal(status.status, 400, 'the status call refuses a malformed header too');
  const fresh = await send(gateway, '/rate_limit_status', ['Authorization', 'Bearer fresh']);
  t.same(JSON.parse(fresh.body), { 'x-rate-limit-limit': LIMIT, 'x-rate-limit-remaining': LIMIT, 'x-rate-limit-reset': 300 }, 'the refused requests counted nothing for the other token');
  t.equal((await send(gateway, '/api/vessels', ['Authorization', 'Basic dXNlcjpwYXNz'])).status, 200, 'a header without Bearer is still not limited');
});

t.test("D-outsider-backoff: failed admin logins from the gateway's address never stop registration, and the outsider stays backed off", async (t) => {
  // Before: five failed admin logins on the device from the gateway's address (127.0.0.1 here) made every
  // registration answer 403 `Authentication failed.` until the backoff ended: the gateway sent the admin
  // password with each management call, and the device's backoff (per user name and address) refused it too.
  const ADMIN_PASSWORD = 'outsider test admin pw';
  const { system, clock } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  await system.accounts.setPassword('registration_check', 'carol@example.com', 'carol pw');
  const client = registrationClient(t, system);
  // Registrations alternate agents: each application gets another name without the clock moving (the
  // outsider's backoff runs on the same clock).
  const agents = ['okhttp (Android 14)', 'MyApp (iOS 17)', 'okhttp (Android 14)', 'MyApp (iOS 17)'];
  const register = async () => {
    const { data, error, response } = await answered(registerClient({ client, body: { username: 'carol@example.com', password: 'carol pw' }, headers: { 'User-Agent': agents.shift()! } }));
    return { status: response.status, data, error };
  };
  const device = system.url('device');
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const asAdmin = (password: string) => fetch(`${device}/mgmt/tm/traffic/rule`, { headers: { authorization: basic('admin', password) } }).then((r) => r.status);
  const tokenLogin = (password: string) =>
    fetch(`${device}/mgmt/shared/authn/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password, loginProviderName: 'tmos' }) }).then((r) => r.status);
  /** Failed admin logins from 127.0.0.1, both kinds: basic authentication and token login. */
  const outsider = async () => {
    for (let i = 0; i < 3; i++) t.equal(await asAdmin(`guess ${i}`), 401);
    for (let i = 0; i < 3; i++) t.equal(await tokenLogin(`guess ${i}`), 401);
  };

  // The gateway logs in at its start; the first registration waits for that login, so what follows is
  // ordered. (An outsider failing before the gateway's very first login can delay that login: README.)
  t.equal((await register()).status, 200, 'a first registration');
  await outsider();
  t.equal(await asAdmin(ADMIN_PASSWORD), 401, 'the outsider is backed off: even the right password is refused unchecked');
  t.match(await register(), { status: 200, data: { client_id: /^[0-9a-f]{48}$/ } }, 'registration goes on');
  t.equal(await asAdmin(ADMIN_PASSWORD), 401, 'and the backoff still holds for the outsider');

  // The gateway's token expires (20 min) and is renewed with its refresh token, never with the password:
  // the outsider failing again meanwhile changes nothing.
  clock.advance(1_300_000);
  await outsider();
  t.equal(await asAdmin(ADMIN_PASSWORD), 401, 'backed off again');
  t.equal((await register()).status, 200, 'registration after the token expired');

  // Many user names from the one address: the per-address budget blocks every name there, admin included.
  for (let i = 0; i < 25; i++) await fetch(`${device}/mgmt/tm/traffic/rule`, { headers: { authorization: basic(`user${i}`, 'x') } }).then((r) => r.body?.cancel());
  t.equal(await tokenLogin(ADMIN_PASSWORD), 401, 'the address is backed off for every name');
  t.equal((await register()).status, 200, 'registration still goes on');
  t.equal((await appsOn(system)).length, 4, 'four applications registered');
});
