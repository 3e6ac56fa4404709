import t from 'tap';
import { createClient } from '../../../generated/device-config/client/index.ts';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';

const ADMIN_PASSWORD = 'device admin pw';

t.test('token login: log in, use the token, refresh it, and expired or unknown tokens are 401', async (t) => {
  const { system, clock } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, deviceTokenTimeoutSeconds: 60 } });
  const anonymous = createClient({ baseUrl: system.url('device') });

  const login = await sdk.loginDeviceUser({
    client: anonymous,
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'tmos' },
  });
  t.equal(login.response?.status, 200);
  const token = login.data!.token.token;
  t.match(login.data, {
    username: 'admin',
    loginProviderName: 'tmos',
    token: { token: /^[A-Z2-7]{32}$/, userName: 'admin', timeout: 60, kind: 'shared:authz:tokens:authtokenitemstate', partition: '[All]' },
    refreshToken: { token: /^[A-Z2-7]{32}$/, timeout: 36000 },
  });
  t.equal(login.data!.token.expirationMicros - login.data!.token.lastUpdateMicros!, 60_000_000, 'expiry is start plus timeout');
  const [row] = await system.database.query('SELECT COUNT(*) AS n FROM auth_tokens WHERE token_hash = $1', [token]);
  t.equal(Number(row!.n), 0, 'the token itself is not stored, only its digest');

  const withToken = createClient({ baseUrl: system.url('device'), headers: { 'x-vendor-auth-token': token } });
  const info = await sdk.getDeviceInfo({ client: withToken });
  t.equal(info.response?.status, 200, 'the token opens every operation');
  t.match(info.data, {
    kind: 'shared:resolver:device-groups:deviceinfostate',
    hostname: /./,
    version: '16.1.0',
    product: /./,
    platform: /./,
  });
  t.equal(
    (await sdk.getDeployInfo({ client: withToken })).data?.schemaCurrent,
    '3.56.0',
    'and the declarative extension info, as automation clients read next',
  );

  await clock.advanceAsync(60_000);
  const expired = await sdk.getDeviceInfo({ client: withToken });
  t.equal(expired.response?.status, 401, 'expired after its timeout');
  t.same(
    expired.error,
    { code: 401, message: 'X-Vendor-Auth-Token does not exist or has expired.', errorStack: [], apiError: 1 },
    'the refusal names the token, not a missing header',
  );

  const exchanged = await sdk.exchangeDeviceRefreshToken({
    client: anonymous,
    body: { refreshToken: { token: login.data!.refreshToken!.token } },
  });
  t.equal(exchanged.response?.status, 200, 'the refresh token buys a new one without the password');
  const fresh = createClient({ baseUrl: system.url('device'), headers: { 'x-vendor-auth-token': exchanged.data!.token.token } });
  t.equal((await sdk.getDeviceInfo({ client: fresh })).response?.status, 200);

  const unknown = await sdk.getDeviceInfo({
    client: createClient({ baseUrl: system.url('device'), headers: { 'x-vendor-auth-token': 'NOPE' } }),
  });
  t.equal(unknown.response?.status, 401);
  t.notMatch(JSON.stringify(unknown.error), /NOPE/, 'the token is never repeated');
  const badRefresh = await sdk.exchangeDeviceRefreshToken({ client: anonymous, body: { refreshToken: { token } } });
  t.equal(badRefresh.response?.status, 401, 'an access token is not a refresh token');
});

t.test('login failures are one answer, and the login body is never echoed', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const anonymous = createClient({ baseUrl: system.url('device') });
  for (const body of [
    { username: 'admin', password: 'wrong password' },
    { username: 'nobody', password: ADMIN_PASSWORD },
    { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'radius' },
  ]) {
    const { response, error } = await sdk.loginDeviceUser({ client: anonymous, body });
    t.equal(response?.status, 401);
    t.same(error, { code: 401, message: 'Authentication failed.', errorStack: [], apiError: 1 });
  }
  const noPassword = await fetch(`${system.url('device')}/mgmt/shared/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"username":"admin","secretish":"hunter2"}',
  });
  t.equal(noPassword.status, 400);
  t.notMatch(await noPassword.text(), /hunter2|secretish/);
});

t.test('requests without credentials are 401 with the basic challenge; basic auth still works', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const none = await fetch(`${system.url('device')}/mgmt/tm/traffic/rule`);
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), 'Basic realm="Enterprise Manager"');
  t.same(await none.json(), {
    code: 401,
    message: 'Authorization failed: no user authentication header or token detected.',
    errorStack: [],
    apiError: 1,
  });
  const basic = await fetch(`${system.url('device')}/mgmt/tm/traffic/rule`, {
    headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) },
  });
  t.equal(basic.status, 200);
});

t.test('script objects: create, list, read, patch (generation up), delete, in the real product forms', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = createClient({ baseUrl: system.url('device'), headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });
  const text = 'when HTTP_REQUEST {\n  HTTP::redirect https://[HTTP::host][HTTP::uri]\n}';
  const created = await sdk.createRule({ client, body: { name: 'redirect_to_https', apiAnonymous: text } });
  t.equal(created.response?.status, 200);
  t.same(created.data, {
    kind: 'tm:traffic:rule:rulestate',
    name: 'redirect_to_https',
    partition: 'Common',
    fullPath: '/Common/redirect_to_https',
    generation: 1,
    selfLink: 'https://localhost/mgmt/tm/traffic/rule/~Common~redirect_to_https?ver=16.1.0',
    apiAnonymous: text,
  });
  const duplicate = await sdk.createRule({ client, body: { name: 'redirect_to_https', apiAnonymous: text } });
  t.equal(duplicate.response?.status, 409);
  t.same(duplicate.error, {
    code: 409,
    message: '01020066:3: The requested rule (/Common/redirect_to_https) already exists in partition Common.',
    errorStack: [],
    apiError: 3,
  });

  const path = { partition: 'Common', ruleName: 'redirect_to_https' };
  const patched = await sdk.patchRule({
    client,
    path,
    body: { apiAnonymous: 'when HTTP_REQUEST {\n  HTTP::redirect https://[HTTP::host]:443[HTTP::uri]\n}' },
  });
  t.equal(patched.data?.generation, 2, 'generation goes up on change');
  const incomplete = await sdk.patchRule({
    client,
    path,
    body: { apiAnonymous: 'when HTTP_REQUEST {\n  HTTP::redirect https://[HTTP::host' },
  });
  t.equal(incomplete.response?.status, 400);
  t.same(incomplete.error, { code: 400, message: 'incomplete command', errorStack: [], apiError: 26214401 });
  t.equal((await sdk.getRule({ client, path })).data?.generation, 2, 'a refused patch changes nothing');

  const list = await sdk.listRules({ client });
  t.equal(list.data?.kind, 'tm:traffic:rule:rulecollectionstate');
  t.same(
    list.data?.items.map((r) => r.fullPath),
    ['/Common/redirect_to_https'],
  );

  const invalidJson = await fetch(`${system.url('device')}/mgmt/tm/traffic/rule`, {
    method: 'POST',
    headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
    body: '{"name": "x", ',
  });
  t.same(await invalidJson.json(), { code: 400, message: 'Found invalid JSON body in the request.', errorStack: [], apiError: 1 });

  t.equal((await sdk.deleteRule({ client, path })).response?.status, 200);
  const gone = await sdk.getRule({ client, path });
  t.equal(gone.response?.status, 404);
  t.same(gone.error, {
    code: 404,
    message: '01020036:3: The requested rule (/Common/redirect_to_https) was not found.',
    errorStack: [],
    apiError: 3,
  });

  const bash = await sdk.getBashUtility({ client });
  t.equal(bash.response?.status, 403);
  t.match(bash.error, { code: 403, message: /\/util\/bash/ });
});

t.test('system database variables: defaults, validated values, saved across a restart', async (t) => {
  const { system, config, stop } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = createClient({ baseUrl: system.url('device'), headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });
  const level = { dbName: 'dataplane.quic.log.level' };
  t.match((await sdk.getDbVariable({ client, path: level })).data, {
    value: 'Critical',
    defaultValue: 'Critical',
    valueRange: 'Critical Error Warning Notice Info Debug',
  });
  const wrong = await sdk.patchDbVariable({ client, path: level, body: { value: 'debug' } });
  t.equal(wrong.response?.status, 400, 'values are case-sensitive: debug is a log.access.level value');
  t.match(wrong.error, { apiError: 3, message: /Critical \| Error \| Warning \| Notice \| Info \| Debug/ });
  t.equal((await sdk.patchDbVariable({ client, path: level, body: { value: 'Debug' } })).data?.value, 'Debug');
  t.equal((await sdk.patchDbVariable({ client, path: { dbName: 'log.access.level' }, body: { value: 'debug' } })).data?.value, 'debug');
  t.equal((await sdk.getDbVariable({ client, path: { dbName: 'no.such.variable' } })).response?.status, 404);

  await stop();
  const again = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, database: config.database } });
  const client2 = createClient({
    baseUrl: again.system.url('device'),
    headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) },
  });
  t.equal((await sdk.getDbVariable({ client: client2, path: level })).data?.value, 'Debug', 'saved');
  t.equal((await sdk.getDbVariable({ client: client2, path: { dbName: 'log.access.level' } })).data?.value, 'debug');
});

t.test('any other path under the declarative extension is 400 Bad Request: Invalid path, as the real one answers', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  for (const path of ['/mgmt/shared/appsvcs', '/mgmt/shared/appsvcs/foo', '/mgmt/shared/appsvcs/declare/a/b']) {
    const response = await fetch(`${system.url('device')}${path}`, {
      headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) },
    });
    t.equal(response.status, 400, path);
    t.same(await response.json(), { code: 400, message: 'Bad Request: Invalid path' });
  }
  const anonymous = await fetch(`${system.url('device')}/mgmt/shared/appsvcs/foo`);
  t.equal(anonymous.status, 401, 'credentials first, as on any operation of the interface');
  t.equal(anonymous.headers.get('www-authenticate'), 'Basic realm="Enterprise Manager"');
  await anonymous.arrayBuffer();
  const elsewhere = await fetch(`${system.url('device')}/mgmt/tm/nothing/here`);
  t.equal(elsewhere.status, 404, 'other unknown paths stay 404');
  await elsewhere.arrayBuffer();
  const wrongMethod = await fetch(`${system.url('device')}/mgmt/shared/appsvcs/info`, { method: 'PUT' });
  t.equal(wrongMethod.status, 405, 'a served path with another method is still 405');
  await wrongMethod.arrayBuffer();
});
