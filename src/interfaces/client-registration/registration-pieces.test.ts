import t from 'tap';
import { agentOf, clientAppName } from './client-app-name.ts';
import { readRegistrationForm } from './registration-form.ts';
import { renderRegistrationError } from './error-shape.ts';
import { portolanError, type Problem } from '../../lib/errors.ts';
import { ConfigError } from '../../lib/config.ts';
import { loadConfig } from '../../app/config.ts';
import { loadSpec } from '../../lib/spec-catalog.ts';

t.test('the agent comes from the User-Agent: android first, then ios, else default', async (t) => {
  t.equal(agentOf('okhttp/4.12.0 (Linux; Android 14; Pixel 8)'), 'android');
  t.equal(agentOf('MyApp/2.1 (iPhone; iOS 17.4; Scale/3.00)'), 'ios');
  t.equal(agentOf('ANDROID'), 'android', 'case-insensitive');
  t.equal(agentOf('IOS'), 'ios');
  t.equal(agentOf('Dalvik/2.1.0 (Linux; U; Android 13) compatible with iOS'), 'android', 'android is tested first');
  t.equal(agentOf('curl/8.5.0'), 'default');
  t.equal(agentOf(undefined), 'default');
  t.equal(agentOf(''), 'default');
  t.equal(agentOf('BIOS-updater/1.0'), 'ios', 'a plain substring test, as the seed says');
});

t.test('the application name is <username with @ as .>-<agent>-<seconds>', async (t) => {
  t.equal(clientAppName('alice@example.com', 'android', 1715679000), 'alice.example.com-android-1715679000');
  t.equal(clientAppName('a@b@c', 'ios', 1), 'a.b.c-ios-1', 'every @');
  t.equal(clientAppName('bob', 'default', 1767225600), 'bob-default-1767225600');
});

t.test('the form is read strictly from the raw body', async (t) => {
  const read = (text: string | undefined) => readRegistrationForm(text === undefined ? undefined : Buffer.from(text));
  t.same(read('username=alice%40example.com&password=c0rrect+horse%26more'), {
    ok: true,
    form: { username: 'alice@example.com', password: 'c0rrect horse&more' },
  });
  t.same(
    read('password=p%C3%A9&username=%C3%A9mile'),
    { ok: true, form: { username: '\u00e9mile', password: 'p\u00e9' } },
    'UTF-8 escapes, any order',
  );
  t.same(read(undefined), { ok: false, problem: 'form fields username and password are required' });
  t.same(read('username=alice'), { ok: false, problem: 'form field password is required' });
  t.same(read('username=%zz&password=p'), { ok: false, problem: 'malformed form body: invalid percent-encoding in field username' });
  t.same(read('username=a&password=%E0%A4'), { ok: false, problem: 'malformed form body: invalid percent-encoding in field password' });
  t.same(read('username=a&password=b&grant_type=password'), {
    ok: false,
    problem: 'the form may hold only the fields username and password',
  });
  t.same(
    read('username=alice&c0rrect%20horse'),
    { ok: false, problem: 'the form may hold only the fields username and password' },
    'a password sent without its name is never echoed',
  );
  t.same(read('username=a&username=b&password=c'), { ok: false, problem: 'form field username is given more than once' });
});

t.test('framework failures read as the spec sentences, with the registration headers', async (t) => {
  const render = (problems: Problem[]) => renderRegistrationError(portolanError('invalidRequest', 'Invalid request.', problems));
  const message = (problems: Problem[]) => (render(problems).body as { 'error-message': string })['error-message'];
  const required = (pointer: string, missingProperty: string): Problem => ({
    pointer,
    keyword: 'required',
    message: `must have required property '${missingProperty}'`,
    params: { missingProperty },
  });
  t.same(render([required('/body', 'password')]), {
    status: 400,
    body: { error: 'invalid request', 'error-message': 'form field password is required' },
    headers: { connection: 'close', 'cache-control': 'no-store' },
  });
  t.equal(message([required('', 'requestBody')]), 'form fields username and password are required');
  t.equal(message([required('/body', 'username'), required('/body', 'password')]), 'form fields username and password are required');
  t.equal(
    message([
      {
        pointer: '/body',
        keyword: 'additionalProperties',
        message: 'must NOT have additional properties',
        params: { additionalProperty: 's3cret' },
      },
    ]),
    'the form may hold only the fields username and password',
  );
  t.equal(
    message([
      { pointer: '/body/username', keyword: 'minLength', message: 'must NOT have fewer than 1 characters', params: { limit: 1 } },
      { pointer: '/body/password', keyword: 'maxLength', message: 'must NOT have more than 1024 characters', params: { limit: 1024 } },
    ]),
    'form field username must not be empty; form field password must be at most 1024 characters',
  );
  t.same(
    renderRegistrationError(portolanError('payloadTooLarge', 'request body of 2097152 bytes exceeds the limit of 1048576 bytes')).body,
    { error: 'request too large', 'error-message': 'request body of 2097152 bytes exceeds the limit of 1048576 bytes' },
  );
});

t.test('registration settings: the spec defaults, PORTOLAN_* names, secrets never in a config error', async (t) => {
  const defaults = (loadSpec('client-registration').info as unknown as { 'x-registration-settings': Record<string, { default: unknown }> })[
    'x-registration-settings'
  ];
  const config = loadConfig({});
  t.same(
    {
      accessProfile: config.registrationAccessProfile,
      sessionTimeout: config.registrationSessionTimeoutSeconds,
      sessionLifetime: config.registrationSessionLifetimeSeconds,
      partition: config.registrationPartition,
      oauthProfile: config.registrationOauthProfile,
      scopes: config.registrationScopes,
      accessPolicy: config.registrationAccessPolicy,
      registrationPath: config.registrationPath,
      hostName: config.registrationHost,
      staticClientCredentials: config.registrationStaticCredentials,
      adminUser: config.adminUser,
      maxBodyBytes: config.registrationMaxBodyBytes,
    },
    Object.fromEntries(
      [
        'accessProfile',
        'sessionTimeout',
        'sessionLifetime',
        'partition',
        'oauthProfile',
        'scopes',
        'accessPolicy',
        'registrationPath',
        'hostName',
        'staticClientCredentials',
        'adminUser',
        'maxBodyBytes',
      ].map((k) => [k, defaults[k]!.default]),
    ),
    'every default is the spec one',
  );
  t.same(
    [config.registrationStaticClientId, config.registrationStaticClientSecret, config.adminPassword, config.managementUrl],
    ['', '', '', ''],
    'unset secrets and URL are empty',
  );

  const set = loadConfig({
    PORTOLAN_REGISTRATION_STATIC_CREDENTIALS: 'true',
    PORTOLAN_REGISTRATION_STATIC_CLIENT_ID: 'id',
    PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET: 'sec',
    PORTOLAN_REGISTRATION_SESSION_TIMEOUT_SECONDS: '60',
    PORTOLAN_MANAGEMENT_URL: 'http://10.0.0.5:8100',
    PORTOLAN_ADMIN_USER: 'root',
    PORTOLAN_ADMIN_PASSWORD: 'pw',
  });
  t.match(set, {
    registrationStaticCredentials: true,
    registrationStaticClientId: 'id',
    registrationStaticClientSecret: 'sec',
    registrationSessionTimeoutSeconds: 60,
    managementUrl: 'http://10.0.0.5:8100',
    adminUser: 'root',
    adminPassword: 'pw',
  });

  const secret = 's3cret-'.repeat(200);
  const error = (() => {
    try {
      loadConfig({
        PORTOLAN_ADMIN_PASSWORD: secret,
        PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET: secret,
        PORTOLAN_MANAGEMENT_URL: 'ftp://x',
      });
    } catch (e) {
      return e;
    }
  })();
  t.ok(error instanceof ConfigError);
  const message = (error as ConfigError).message;
  t.match(message, /PORTOLAN_ADMIN_PASSWORD must NOT have more than 1024 characters/);
  t.match(message, /PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET must NOT have more than 1024 characters/);
  t.match(message, /PORTOLAN_MANAGEMENT_URL must match pattern/);
  t.notMatch(message, 's3cret', 'the secret values are not repeated');
});
