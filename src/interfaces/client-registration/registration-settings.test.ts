import t from 'tap';
import { createServer } from 'node:net';
import { registerClient } from '../../../generated/client-registration/sdk.gen.ts';
import type { Config } from '../../app/config.ts';
import { createLogger } from '../../lib/logger.ts';
import type { Handler } from '../../server/handler-types.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { createClientRegistrationDependencies } from './compose.ts';
import { createClientRegistrationHandlers } from './handlers.ts';
import { answered, appsOn, policyGeneration, registrationClient } from './fixtures/registration-test-kit.ts';

// Registration under other settings, end to end over real HTTP (gateway -> device role).

const ADMIN_PASSWORD = 'registration admin pw';

/** A closed port: nothing listens there (the kernel answers connection refused). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('registration under other settings: static credentials, failing management steps, no device', async (t) => {
  // One system; its registration handler is rebuilt from each test's settings through the same
  // composition system.ts uses, so each case costs no restart. The management calls stay real HTTP.
  let current: Handler = () => ({ status: 500 });
  const { system, clock, config } = await startTestSystem(t, {
    config: { adminPassword: ADMIN_PASSWORD },
    handlers: { 'client-registration': { registerClient: (request) => current(request) } },
  });
  const silent = createLogger({ level: 'silent' });
  const stopping = new AbortController();
  t.teardown(() => stopping.abort());
  const use = (settings: Partial<Config>) => {
    const deps = createClientRegistrationDependencies({
      config: { ...config, ...settings },
      accounts: system.accounts,
      admin: { username: 'admin', password: ADMIN_PASSWORD },
      deviceRoleUrl: () => system.url('device'),
      clock,
      timers: clock,
      stopping: stopping.signal,
      logger: silent,
    });
    current = createClientRegistrationHandlers(deps).registerClient!;
  };
  await system.accounts.setPassword('registration_check', 'bob', 'bob pw');
  const client = registrationClient(t, system);
  const register = () => answered(registerClient({ client, body: { username: 'bob', password: 'bob pw' } }));

  t.test('static credentials: 200 with the configured pair, nothing created', async (t) => {
    use({
      registrationStaticCredentials: true,
      registrationStaticClientId: 'static-mobile-client',
      registrationStaticClientSecret: 'static-mobile-secret',
    });
    const { data, response } = await register();
    t.equal(response.status, 200);
    t.same(data, { client_id: 'static-mobile-client', client_secret: 'static-mobile-secret' });
    t.equal(response.headers.get('connection'), 'close');
    t.same(await appsOn(system), [], 'no application on the device');
    t.equal(await policyGeneration(system), 1, 'policy not re-applied');
  });

  t.test('static credentials still check the user first', async (t) => {
    use({ registrationStaticCredentials: true, registrationStaticClientId: 'id', registrationStaticClientSecret: 'secret' });
    const { error, response } = await answered(registerClient({ client, body: { username: 'bob', password: 'nope' } }));
    t.equal(response.status, 403);
    t.equal(error?.error, 'invalid user credentials');
  });

  t.test('static mode without the pair is refused at start', async (t) => {
    t.throws(
      () => use({ registrationStaticCredentials: true, registrationStaticClientId: 'id' }),
      /PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET must both be set/,
    );
  });

  t.test('a profile nobody was added to: 403 (not_started)', async (t) => {
    use({ registrationAccessProfile: 'never_set_up' });
    const { error, response } = await register();
    t.equal(response.status, 403);
    t.same(error, { error: 'invalid user credentials', 'error-message': 'access denied by the access policy' });
    t.equal(await system.accounts.verify('never_set_up', 'bob', 'bob pw'), 'not_started');
  });

  t.test('binding fails (no such OAuth profile): 403 with the device message, the created app deleted', async (t) => {
    use({ registrationOauthProfile: 'missing_profile' });
    const { error, response } = await register();
    t.equal(response.status, 403);
    t.same(error, {
      error: 'ClientApp binding failed',
      'error-message': '01020036:3: The requested OAuth profile (/Common/missing_profile) was not found.',
    });
    t.same(await appsOn(system), [], 'no orphan application');
  });

  t.test('re-applying the policy fails (no such policy): 403, the app and its binding deleted', async (t) => {
    clock.advance(1000);
    use({ registrationAccessPolicy: 'missing_policy' });
    const { error, response } = await register();
    t.equal(response.status, 403);
    t.same(error, {
      error: 'Synchronization failed',
      'error-message': '01020036:3: The requested access profile (/Common/missing_policy) was not found.',
    });
    t.same(await appsOn(system), [], 'no orphan application');
    t.same(await system.database.query('SELECT * FROM device_oauth_profile_client_apps'), [], 'no binding left');
  });

  t.test('the device unreachable: 403 with a clear message, and the gateway keeps serving', async (t) => {
    use({ managementUrl: `http://127.0.0.1:${await closedPort()}` });
    const { error, response } = await register();
    t.equal(response.status, 403);
    t.same(error, { error: 'ClientApp creation failed', 'error-message': 'the management interface could not be reached (ECONNREFUSED)' });
    use({});
    clock.advance(1000);
    const after = await register();
    t.equal(after.response.status, 200, 'the next registration works');
    t.equal((await appsOn(system)).length, 1);
  });

  t.test('wrong administrative credentials: the device 401 message is reported', async (t) => {
    clock.advance(1000);
    const deps = createClientRegistrationDependencies({
      config,
      accounts: system.accounts,
      admin: { username: 'admin', password: 'not the admin pw' },
      deviceRoleUrl: () => system.url('device'),
      clock,
      timers: clock,
      stopping: stopping.signal,
      logger: silent,
    });
    current = createClientRegistrationHandlers(deps).registerClient!;
    const { error, response } = await register();
    t.equal(response.status, 403);
    t.same(error, { error: 'ClientApp creation failed', 'error-message': 'Authentication failed.' });
  });
});
