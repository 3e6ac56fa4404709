import t from 'tap';
import { registerClient } from '../../../generated/client-registration/sdk.gen.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { hashClientSecret } from '../device-config/oauth-store.ts';
import { answered, appsOn, policyGeneration, registrationClient } from './fixtures/registration-test-kit.ts';
import { captureLogs } from '../../lib/test-logger.ts';

// End to end: the gateway answers registration and calls the device role over real HTTP.

const ADMIN_PASSWORD = 'registration admin pw';
const USER = { username: 'alice@example.com', password: 'c0rrect horse battery staple' };
const ANDROID = 'okhttp/4.12.0 (Linux; Android 14; Pixel 8)';
// The fake clock starts at 2026-01-01T00:00:00Z.
const START_SECONDS = 1767225600;

t.test('registration on the running system, over real HTTP to the device role', async (t) => {
  const log = captureLogs();
  const { system, clock } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, logger: log.logger });
  await system.accounts.setPassword('registration_check', USER.username, USER.password);
  const client = registrationClient(t, system);
  const register = (body: { username: string; password: string }, userAgent?: string) =>
    answered(registerClient({ client, body, ...(userAgent ? { headers: { 'User-Agent': userAgent } } : {}) }));
  const secrets: string[] = [];

  t.test('success: the application is created, bound and the policy re-applied; the pair comes back', async (t) => {
    const { data, response } = await register(USER, ANDROID);
    t.equal(response.status, 200);
    t.match(data, { client_id: /^[0-9a-f]{48}$/, client_secret: /^[0-9a-f]{64}$/ });
    secrets.push(data!.client_secret);
    t.equal(response.headers.get('content-type'), 'application/json');
    t.equal(response.headers.get('connection'), 'close');
    t.equal(response.headers.get('cache-control'), 'no-store');
    t.equal(response.headers.get('server'), null, 'no Server header');

    const name = `alice.example.com-android-${START_SECONDS}`;
    t.same(
      await appsOn(system),
      [{ name, client_id: data!.client_id, client_secret_hash: hashClientSecret(data!.client_secret) }],
      'the app exists on the device, its secret only hashed',
    );
    const [row] = await system.database.query('SELECT * FROM device_oauth_client_apps');
    t.match(row, { app_name: name, auth_type: 'secret', grant_password: 'enabled', scopes: 'openid profile' });
    t.same(
      await system.database.query(
        "SELECT app_name FROM device_oauth_profile_client_apps WHERE profile_partition = 'Common' AND profile_name = 'oauth_server'",
      ),
      [{ app_name: name }],
      'bound to the OAuth profile',
    );
    t.equal(await policyGeneration(system), 2, 'policy generation went from 1 to 2');
  });

  t.test('creation fails when an application of that name exists (same user, agent and second): 403, nothing left over', async (t) => {
    clock.advance(999); // still the same second: the name's timestamp is the time in whole seconds
    const before = await appsOn(system);
    const { error, response } = await register(USER, 'Okhttp; ANDROID');
    t.equal(response.status, 403);
    t.same(error, {
      error: 'ClientApp creation failed',
      'error-message': `01020066:3: The requested OAuth client app (/Common/alice.example.com-android-${START_SECONDS}) already exists in partition Common.`,
    });
    t.equal(response.headers.get('connection'), 'close');
    t.same(await appsOn(system), before, 'the existing application is untouched and no other was made');
  });

  t.test('a second later another application is registered, for iOS', async (t) => {
    clock.advance(1000);
    const { data, response } = await register(USER, 'MyApp/2.1 (iPhone; iOS 17.4)');
    t.equal(response.status, 200);
    secrets.push(data!.client_secret);
    t.ok((await appsOn(system)).some((a) => a.name === `alice.example.com-ios-${START_SECONDS + 1}`));
    t.equal(await policyGeneration(system), 3);
  });

  t.test('a wrong password or an unknown user is 403 invalid user credentials (deny)', async (t) => {
    const before = await appsOn(system);
    for (const body of [
      { ...USER, password: 'wrong' },
      { username: 'mallory', password: USER.password },
    ]) {
      const { error, response } = await register(body);
      t.equal(response.status, 403);
      t.same(error, { error: 'invalid user credentials', 'error-message': 'access denied by the access policy' });
      t.equal(response.headers.get('cache-control'), 'no-store');
    }
    t.same(await appsOn(system), before, 'nothing created');
  });

  t.test('bad forms are 400 with the spec sentences and the registration headers', async (t) => {
    const raw = async (body: string) => {
      const { error, response } = await answered(
        client.post({
          url: '/vendor-oauth2/v1/client-register',
          body,
          bodySerializer: (b: unknown) => b as string,
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
      );
      return { status: response.status, body: error, headers: response.headers };
    };
    const cases: [string, string][] = [
      ['username=alice', 'form field password is required'],
      ['', 'form fields username and password are required'],
      ['username=%zz&password=p', 'malformed form body: invalid percent-encoding in field username'],
      ['username=a&password=b&grant_type=password', 'the form may hold only the fields username and password'],
      ['username=&password=b', 'form field username must not be empty'],
    ];
    for (const [body, message] of cases) {
      const answer = await raw(body);
      t.equal(answer.status, 400, JSON.stringify(body));
      t.same(answer.body, { error: 'invalid request', 'error-message': message });
      t.equal(answer.headers.get('connection'), 'close');
      t.equal(answer.headers.get('cache-control'), 'no-store');
    }
  });

  t.test('a profile with no users was never started: 403 (not_started)', async (t) => {
    await system.accounts.remove('registration_check', USER.username);
    const { error, response } = await register(USER);
    t.equal(response.status, 403);
    t.same(error, { error: 'invalid user credentials', 'error-message': 'access denied by the access policy' });
    t.equal(await system.accounts.verify('registration_check', USER.username, USER.password), 'not_started', 'the verdict was not_started');
  });

  t.test('no password, client secret or Authorization value reaches the logs', async (t) => {
    const text = log.text();
    t.match(text, /client application registered/, 'the log did capture the flow');
    t.match(text, /"operationId":"createOauthClientApp"/, 'and the device calls');
    const adminAuthorization = basicAuthorization('admin', ADMIN_PASSWORD);
    for (const secret of [USER.password, ADMIN_PASSWORD, adminAuthorization, adminAuthorization.slice(6), ...secrets]) {
      t.notOk(text.includes(secret), `not in the log: ${secret.slice(0, 6)}...`);
    }
    t.equal(secrets.length, 2);
  });
});
