import t from 'tap';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerClient } from '../../generated/client-registration/sdk.gen.ts';
import { createClient as createDeviceClient } from '../../generated/device-config/client/index.ts';
import * as deviceSdk from '../../generated/device-config/sdk.gen.ts';
import { createClient as createCentralClient } from '../../generated/topology/client/index.ts';
import * as centralSdk from '../../generated/topology/sdk.gen.ts';
import { startTestSystem } from '../app/test-system.ts';
import type { TapTest } from '../lib/tap-test.ts';
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
  for (let i = 0; i < LIMIT; i++)
    t.equal(
      (await send(gateway, '/api/vessels', ['Authorization', `Bearer ${token}`])).status,
      200,
      `request ${i + 1} of the seed's form passes`,
    );
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
  const several = await send(gateway, '/rate_limit_status', ['Authorization', 'Basic x', 'Authorization', `Bearer ${token}`]);
  t.equal(several.status, 400, "and several Authorization fields, one naming Bearer, as the counting does (not node's first field only)");
  t.equal(several.headers['www-authenticate'], 'Bearer error="invalid_request"');
  const fresh = await send(gateway, '/rate_limit_status', ['Authorization', 'Bearer fresh']);
  t.same(
    JSON.parse(fresh.body),
    { 'x-rate-limit-limit': LIMIT, 'x-rate-limit-remaining': LIMIT, 'x-rate-limit-reset': 300 },
    'the refused requests counted nothing for the other token',
  );
  t.equal(
    (await send(gateway, '/api/vessels', ['Authorization', 'Basic dXNlcjpwYXNz'])).status,
    200,
    'a header without Bearer is still not limited',
  );
});

t.test(
  "D-outsider-backoff: failed admin logins from the gateway's address never stop registration, and the outsider stays backed off",
  async (t) => {
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
      const { data, error, response } = await answered(
        registerClient({
          client,
          body: { username: 'carol@example.com', password: 'carol pw' },
          headers: { 'User-Agent': agents.shift()! },
        }),
      );
      return { status: response.status, data, error };
    };
    const device = system.url('device');
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const asAdmin = (password: string) =>
      fetch(`${device}/mgmt/tm/traffic/rule`, { headers: { authorization: basic('admin', password) } }).then((r) => r.status);
    const tokenLogin = (password: string) =>
      fetch(`${device}/mgmt/shared/authn/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password, loginProviderName: 'tmos' }),
      }).then((r) => r.status);
    /** Failed admin logins from 127.0.0.1, both kinds: basic authentication and token login. */
    const outsider = async () => {
      for (let i = 0; i < 3; i++) t.equal(await asAdmin(`guess ${i}`), 401);
      for (let i = 0; i < 3; i++) t.equal(await tokenLogin(`guess ${i}`), 401);
    };

    // The gateway logs in at its start; the first registration waits for that login, so what follows is
    // ordered. (An outsider already failing when the gateway starts can keep that first login out: the
    // registrations then try it again. D-outsider-backoff-persistent covers what comes after.)
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
    for (let i = 0; i < 25; i++)
      await fetch(`${device}/mgmt/tm/traffic/rule`, { headers: { authorization: basic(`user${i}`, 'x') } }).then((r) => r.body?.cancel());
    t.equal(await tokenLogin(ADMIN_PASSWORD), 401, 'the address is backed off for every name');
    t.equal((await register()).status, 200, 'registration still goes on');
    t.equal((await appsOn(system)).length, 4, 'four applications registered');
  },
);

/**
 * A pass-through in front of the device's management interface that counts what the gateway sends it: the
 * gateway's own calls reach the device from 127.0.0.1, like the outsider's, and each password login is seen.
 */
async function startCountingFront(t: TapTest, target: () => string) {
  const counts = { passwordLogins: 0, exchanges: 0, refusedExchanges: 0 };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url === '/mgmt/shared/authn/login') counts.passwordLogins++;
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => ['content-type', 'x-vendor-auth-token', 'authorization'].includes(name)),
    ) as Record<string, string>;
    const answer = await fetch(`${target()}${req.url}`, {
      method: req.method,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    if (req.url === '/mgmt/shared/authn/exchange') {
      counts.exchanges++;
      if (answer.status !== 200) counts.refusedExchanges++;
    }
    res
      .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
      .end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts };
}

t.test(
  "D-outsider-backoff-persistent: an outsider failing admin logins from the gateway's address for 32 hours never stops registration; the password crosses once",
  async (t) => {
    // Before: the device kept its refresh tokens for 10 h without renewing them, so the gateway sent the
    // password again in the refresh token's last hour (and after it): with the outsider keeping the backoff
    // up, that login was refused, and from 10 h on every registration answered 403 `Authentication failed.`.
    const ADMIN_PASSWORD = 'persistent outsider admin pw';
    let deviceUrl = '';
    const front = await startCountingFront(t, () => deviceUrl);
    const { system, clock } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, managementUrl: front.url } });
    deviceUrl = system.url('device');
    await system.accounts.setPassword('registration_check', 'dave@example.com', 'dave pw');
    const client = registrationClient(t, system);
    const register = async () =>
      (await answered(registerClient({ client, body: { username: 'dave@example.com', password: 'dave pw' } }))).response.status;
    const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
    const asAdmin = (password: string) =>
      fetch(`${deviceUrl}/mgmt/tm/traffic/rule`, { headers: { authorization: basic(password) } }).then((r) => r.status);
    const tokenLogin = (password: string) =>
      fetch(`${deviceUrl}/mgmt/shared/authn/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password, loginProviderName: 'tmos' }),
      }).then((r) => r.status);

    t.equal(await register(), 200, 'a first registration (the gateway has logged in)');
    // Steps of the fake clock between registrations: mostly an hour, once 9.5 h of quiet (under the refresh
    // token's 10 h, which each exchange starts again), 32.5 h in all.
    const steps = [...Array(12).fill(3_600_000), 34_200_000, ...Array(11).fill(3_600_000)] as number[];
    let elapsedMs = 0;
    let refusedRegistrations = 0;
    let outsiderAdmitted = 0;
    for (const stepMs of steps) {
      clock.advance(stepMs);
      elapsedMs += stepMs;
      // The outsider, right before each registration: failed logins of both kinds from 127.0.0.1, then the
      // right password, which the backoff refuses unchecked.
      for (let i = 0; i < 3; i++) await asAdmin(`guess ${elapsedMs} ${i}`);
      for (let i = 0; i < 3; i++) await tokenLogin(`guess ${elapsedMs} ${i}`);
      if ((await tokenLogin(ADMIN_PASSWORD)) !== 401) outsiderAdmitted++;
      if ((await register()) !== 200) refusedRegistrations++;
    }
    t.ok(elapsedMs > 30 * 3_600_000, `${elapsedMs / 3_600_000} h of the fake clock`);
    t.equal(outsiderAdmitted, 0, 'the backoff held for the outsider before every registration');
    t.equal(refusedRegistrations, 0, 'every registration answered 200');
    t.equal(front.counts.passwordLogins, 1, 'the gateway sent the administrative password once, at its start');
    t.ok(front.counts.exchanges >= steps.length, `the gateway renewed its token ${front.counts.exchanges} times with the refresh token`);
    t.equal(front.counts.refusedExchanges, 0, 'no exchange was refused');
    t.equal((await appsOn(system)).length, steps.length + 1, 'every registration left its application');
  },
);

t.test(
  "F-refresh-token-reuse: a refresh token used a second time is refused and revokes its login's tokens (device and central)",
  async (t) => {
    // Before: an exchange left its refresh token valid for its whole life (10 h), and answered no successor.
    const ADMIN_PASSWORD = 'rotation admin pw';
    const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
    const roles = [
      {
        role: 'device',
        login: (body: { username: string; password: string; loginProviderName: string }) =>
          deviceSdk.loginDeviceUser({ client: createDeviceClient({ baseUrl: system.url('device') }), body }),
        exchange: (token: string) =>
          deviceSdk.exchangeDeviceRefreshToken({
            client: createDeviceClient({ baseUrl: system.url('device') }),
            body: { refreshToken: { token } },
          }),
        call: (token: string) =>
          deviceSdk.getDeviceInfo({
            client: createDeviceClient({ baseUrl: system.url('device'), headers: { 'x-vendor-auth-token': token } }),
          }),
        provider: 'tmos',
      },
      {
        role: 'central',
        login: (body: { username: string; password: string; loginProviderName: string }) =>
          centralSdk.loginManagementUser({ client: createCentralClient({ baseUrl: system.url('central') }), body }),
        exchange: (token: string) =>
          centralSdk.exchangeRefreshToken({
            client: createCentralClient({ baseUrl: system.url('central') }),
            body: { refreshToken: { token } },
          }),
        call: (token: string) =>
          centralSdk.getTopologyTask({
            client: createCentralClient({ baseUrl: system.url('central'), headers: { 'x-vendor-auth-token': token } }),
            path: { taskId: 'none' },
          }),
        provider: 'local',
      },
    ];
    for (const { role, login, exchange, call, provider } of roles) {
      const loggedIn = await login({ username: 'admin', password: ADMIN_PASSWORD, loginProviderName: provider });
      const first = loggedIn.data!.refreshToken!.token;
      const rotated = await exchange(first);
      t.equal(rotated.response?.status, 200, `${role}: the first exchange`);
      const second = rotated.data?.refreshToken?.token;
      t.match(
        rotated.data?.refreshToken,
        { token: /^[A-Z2-7]{32}$/, timeout: 36000 },
        `${role}: the answer carries the next refresh token`,
      );
      t.not(second, first, `${role}: a new one`);
      const next = await exchange(second!);
      t.equal(next.response?.status, 200, `${role}: the successor serves`);
      const liveAccess = next.data!.token.token;
      t.not((await call(liveAccess)).response?.status, 401, `${role}: its access token opens the API`);

      const reused = await exchange(first);
      t.equal(reused.response?.status, 401, `${role}: the used refresh token is refused`);
      t.match(reused.error, { code: 401, message: 'Authentication failed.' });
      t.notMatch(JSON.stringify(reused.error), new RegExp(first), `${role}: the token is not repeated`);
      t.equal(
        (await exchange(next.data!.refreshToken!.token)).response?.status,
        401,
        `${role}: the reuse revoked the newest refresh token of that login`,
      );
      t.equal((await call(liveAccess)).response?.status, 401, `${role}: and its access tokens`);
      t.equal(
        (await login({ username: 'admin', password: ADMIN_PASSWORD, loginProviderName: provider })).response?.status,
        200,
        `${role}: a password login starts again`,
      );
    }
  },
);
