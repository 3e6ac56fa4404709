import t from 'tap';
import { createClient } from '../../../generated/topology/client/index.ts';
import * as sdk from '../../../generated/topology/sdk.gen.ts';
import { createClient as createDeviceClient } from '../../../generated/device-config/client/index.ts';
import * as device from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';

const ADMIN_PASSWORD = 'central admin pw';

t.test('the management system login issues tokens that open its API; failures are one answer that repeats nothing', async (t) => {
  const { system, clock } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, centralTokenTimeoutSeconds: 30 } });
  const anonymous = createClient({ baseUrl: system.url('central') });
  const login = await sdk.loginManagementUser({
    client: anonymous,
    body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
  });
  t.equal(login.response?.status, 200);
  t.match(login.data, {
    username: 'admin',
    loginProviderName: 'local',
    token: { token: /^[A-Z2-7]{32}$/, timeout: 30, userName: 'admin' },
    refreshToken: { token: /^[A-Z2-7]{32}$/ },
  });

  const withToken = createClient({ baseUrl: system.url('central'), headers: { 'x-vendor-auth-token': login.data!.token.token } });
  const task = await sdk.getTopologyTask({ client: withToken, path: { taskId: 'any' } });
  t.equal(task.response?.status, 404, 'past the token scheme: no task has that id');

  const onDevice = await device.getDeviceInfo({
    client: createDeviceClient({ baseUrl: system.url('device'), headers: { 'x-vendor-auth-token': login.data!.token.token } }),
  });
  t.equal(onDevice.response?.status, 401, "a management system token is not the device's");

  await clock.advanceAsync(30_000);
  const expired = await sdk.getTopologyTask({ client: withToken, path: { taskId: 'any' } });
  t.equal(expired.response?.status, 401, 'expired after its timeout');
  t.match(expired.error, { code: 401, message: 'The token is unknown or expired; log in again.', kind: ':resterrorresponse' });
  const exchanged = await sdk.exchangeRefreshToken({
    client: anonymous,
    body: { refreshToken: { token: login.data!.refreshToken!.token } },
  });
  t.equal(exchanged.response?.status, 200, 'the refresh token buys a new one');

  for (const body of [
    { username: 'admin', password: 'wrong', loginProviderName: 'local' },
    { username: 'nobody', password: ADMIN_PASSWORD, loginProviderName: 'local' },
    { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'radius' },
  ]) {
    const refused = await sdk.loginManagementUser({ client: anonymous, body });
    t.equal(refused.response?.status, 401);
    t.match(refused.error, { code: 401, message: 'Authentication failed.', kind: ':resterrorresponse' });
    t.notMatch(JSON.stringify(refused.error), /wrong|nobody|radius|central admin pw/, 'nothing of the request is repeated');
  }
});

t.test(
  'a user name with a colon never logs in as the name before it (basic authentication would read the rest as the password)',
  async (t) => {
    const { system } = await startTestSystem(t, { config: { adminPassword: 'pass:word' } });
    const anonymous = createClient({ baseUrl: system.url('central') });
    const proper = await sdk.loginManagementUser({
      client: anonymous,
      body: { username: 'admin', password: 'pass:word', loginProviderName: 'local' },
    });
    t.equal(proper.response?.status, 200, 'the real credentials work');
    const split = await sdk.loginManagementUser({
      client: anonymous,
      body: { username: 'admin:pass', password: 'word', loginProviderName: 'local' },
    });
    t.equal(split.response?.status, 401, "'admin:pass' with 'word' is not admin with 'pass:word'");
  },
);
