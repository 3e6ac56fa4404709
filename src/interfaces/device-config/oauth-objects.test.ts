import t from 'tap';
import { createClient } from '../../../generated/device-config/client/index.ts';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { hashClientSecret } from './oauth-store.ts';

const ADMIN_PASSWORD = 'device admin pw';

t.test('the device role serves the OAuth objects client registration calls', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD } });
  const client = createClient({ baseUrl: system.url('device'), headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });
  const input = {
    name: 'alice.example.com-android-1717171717',
    appName: 'alice.example.com-android-1717171717',
    authType: 'secret',
    grantPassword: 'enabled',
    scopes: 'openid profile',
  } as const;

  t.test('create answers the application with a client id and a secret shown only here', async (t) => {
    const { data, response } = await sdk.createOauthClientApp({ client, body: input });
    t.equal(response?.status, 200);
    t.match(data, {
      kind: 'tm:access:oauth:oauth-client-app:oauth-client-appstate',
      name: input.name,
      appName: input.appName,
      partition: 'Common',
      fullPath: `/Common/${input.name}`,
      selfLink: `https://localhost/mgmt/tm/access/oauth/oauth-client-app/~Common~${input.name}?ver=16.1.0`,
      authType: 'secret',
      grantPassword: 'enabled',
      scopes: 'openid profile',
      grantCode: 'disabled',
      grantToken: 'disabled',
      generateRefreshToken: 'true',
      accessTokenLifetime: 5,
      authCodeLifetime: 5,
      refreshTokenLifetime: 480,
      refreshTokenUsageLimit: 64,
      clientId: /^[0-9a-f]{48}$/,
      clientSecret: /^[0-9a-f]{64}$/,
    });
    const [row] = await system.database.query('SELECT client_id, client_secret_hash FROM device_oauth_client_apps WHERE name = $1', [
      input.name,
    ]);
    t.same(row, { client_id: data!.clientId, client_secret_hash: hashClientSecret(data!.clientSecret) }, 'stored with the secret hashed');
  });

  t.test('a second application of the same name is 409 in the real product words', async (t) => {
    const { error, response } = await sdk.createOauthClientApp({ client, body: input });
    t.equal(response?.status, 409);
    t.same(error, {
      code: 409,
      message: `01020066:3: The requested OAuth client app (/Common/${input.name}) already exists in partition Common.`,
      errorStack: [],
      apiError: 3,
    });
  });

  t.test('unsent settings take the real product defaults', async (t) => {
    const { data } = await sdk.createOauthClientApp({ client, body: { name: 'plain', appName: 'plain' } });
    t.match(data, { grantPassword: 'disabled', generateRefreshToken: 'true', accessTokenLifetime: 5 });
    t.notOk('scopes' in data!, 'no scopes when none were sent');
  });

  t.test('binding: bound once, then 409; an unknown application 400; an unknown profile 404', async (t) => {
    const path = { partition: 'Common', oauthProfile: 'oauth_server' };
    const bound = await sdk.bindOauthClientApp({ client, path, body: { name: input.name } });
    t.equal(bound.response?.status, 200);
    t.same(bound.data, {
      kind: 'tm:access:profile:oauth:client-apps:client-appsstate',
      name: input.name,
      partition: 'Common',
      fullPath: `/Common/${input.name}`,
      generation: 1,
      selfLink: `https://localhost/mgmt/tm/access/profile/oauth/~Common~oauth_server/client-apps/~Common~${input.name}?ver=16.1.0`,
    });
    const again = await sdk.bindOauthClientApp({ client, path, body: { name: input.name } });
    t.equal(again.response?.status, 409);
    t.equal(
      again.error?.message,
      `01020066:3: The requested client app (/Common/${input.name}) already exists in OAuth profile (/Common/oauth_server).`,
    );
    const unknownApp = await sdk.bindOauthClientApp({ client, path, body: { name: 'bob-ios-1717170000' } });
    t.equal(unknownApp.response?.status, 400);
    t.same(unknownApp.error, {
      code: 400,
      message: '01020036:3: The requested OAuth client app (/Common/bob-ios-1717170000) was not found.',
      errorStack: [],
      apiError: 3,
    });
    const unknownProfile = await sdk.bindOauthClientApp({
      client,
      path: { partition: 'Common', oauthProfile: 'no_such_profile' },
      body: { name: input.name },
    });
    t.equal(unknownProfile.response?.status, 404);
    t.equal(unknownProfile.error?.message, '01020036:3: The requested OAuth profile (/Common/no_such_profile) was not found.');
  });

  t.test('applying the access policy raises its generation by one each time', async (t) => {
    const path = { partition: 'Common', policyName: 'oauth_access_policy' };
    const first = await sdk.applyAccessPolicy({ client, path, body: { generationAction: 'increment' } });
    t.same(first.data, {
      kind: 'tm:access:profile:access:accessstate',
      name: 'oauth_access_policy',
      partition: 'Common',
      fullPath: '/Common/oauth_access_policy',
      generation: 2,
      selfLink: 'https://localhost/mgmt/tm/access/profile/access/~Common~oauth_access_policy?ver=16.1.0',
      modifiedSinceLastPolicySync: 'false',
    });
    const second = await sdk.applyAccessPolicy({ client, path, body: { generationAction: 'increment' } });
    t.equal(second.data?.generation, 3);
    const missing = await sdk.applyAccessPolicy({
      client,
      path: { partition: 'Common', policyName: 'nope' },
      body: { generationAction: 'increment' },
    });
    t.equal(missing.response?.status, 404);
    t.equal(missing.error?.message, '01020036:3: The requested access profile (/Common/nope) was not found.');
    const badAction = await sdk.applyAccessPolicy({ client, path, body: { generationAction: 'decrement' as 'increment' } });
    t.equal(badAction.response?.status, 400, 'the framework refuses another action');
    t.equal(badAction.error?.apiError, 26214401);
  });

  t.test('deleting an application removes it and its bindings; a second delete is 404', async (t) => {
    const path = { partition: 'Common', appName: input.name };
    const deleted = await fetch(`${system.url('device')}/mgmt/tm/access/oauth/oauth-client-app/~Common~${input.name}`, {
      method: 'DELETE',
      headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) },
    });
    t.equal(deleted.status, 200);
    t.equal(await deleted.text(), '', 'empty body');
    t.same(await system.database.query('SELECT * FROM device_oauth_profile_client_apps'), [], 'no binding left');
    const again = await sdk.deleteOauthClientApp({ client, path });
    t.equal(again.response?.status, 404);
    t.equal(again.error?.message, `01020036:3: The requested OAuth client app (/Common/${input.name}) was not found.`);
  });

  t.test('without or with wrong credentials: 401 in the device error shape with a challenge', async (t) => {
    const cases = [
      { headers: {}, message: 'Authorization failed: no user authentication header or token detected.' },
      { headers: { authorization: basicAuthorization('admin', 'wrong') }, message: 'Authentication failed.' },
      { headers: { authorization: basicAuthorization('mallory', ADMIN_PASSWORD) }, message: 'Authentication failed.' },
      { headers: { authorization: 'Bearer abc' }, message: 'Authentication failed.' },
    ];
    for (const { headers, message } of cases) {
      const anonymous = createClient({ baseUrl: system.url('device'), headers });
      const { error, response } = await sdk.createOauthClientApp({ client: anonymous, body: { name: 'sneaky', appName: 'sneaky' } });
      t.equal(response?.status, 401);
      t.same(error, { code: 401, message, errorStack: [], apiError: 1 });
      t.equal(response?.headers.get('www-authenticate'), 'Basic realm="Enterprise Manager"');
    }
    t.same(await system.database.query("SELECT name FROM device_oauth_client_apps WHERE name = 'sneaky'"), [], 'nothing was created');
  });
});
