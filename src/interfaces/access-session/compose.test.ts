import t from 'tap';
import type { ConfigError } from '../../lib/config.ts';
import { loadConfig } from '../../app/config.ts';
import { createFakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { createAccessSessionDependencies } from './compose.ts';
import { ACCESS_SESSION_MIGRATIONS } from './migrations.ts';
import { ACCESS_SESSION_SETTINGS, AUTHORIZATION_REQUEST } from './spec-examples.ts';
import { USER_PRINCIPAL_NAME } from './variables.ts';

async function wired(t: TapTest, env: Record<string, string>) {
  const database = await openDatabase(tempSqliteUrl(t).url, { migrations: ACCESS_SESSION_MIGRATIONS });
  t.teardown(() => database.close());
  const clock = createFakeClock();
  const deps = createAccessSessionDependencies({ database, config: loadConfig(env), clock });
  return { database, clock, sessions: deps.sessions, deps };
}

t.test('the defaults of the settings are the spec designed defaults', async (t) => {
  const config = loadConfig({});
  const parameter = (name: string) => AUTHORIZATION_REQUEST.defaultRequest.parameters.find((p: { name: string }) => p.name === name).value;
  t.same(
    {
      lifetime: config.accessSessionLifetimeSeconds,
      maxTokenLength: config.accessSessionMaxTokenLength,
      url: config.authorizationUrl,
      clientId: config.authorizationClientId,
      redirectUri: config.authorizationRedirectUri,
      scope: config.authorizationScope,
    },
    {
      lifetime: ACCESS_SESSION_SETTINGS.lifetime.default,
      maxTokenLength: ACCESS_SESSION_SETTINGS.maxTokenLength.default,
      url: AUTHORIZATION_REQUEST.authorizationUrl.default,
      clientId: parameter('client_id'),
      redirectUri: parameter('redirect_uri'),
      scope: parameter('scope'),
    },
  );
});

t.test('wrong settings are refused at start, each named', async (t) => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };
  t.match(problems({ PORTOLAN_AUTHORIZATION_URL: 'ftp://idp.example/authorize' }), [/^PORTOLAN_AUTHORIZATION_URL /]);
  t.match(problems({ PORTOLAN_AUTHORIZATION_URL: 'https://idp.example/authorize#fragment' }), [/^PORTOLAN_AUTHORIZATION_URL /]);
  t.match(problems({ PORTOLAN_AUTHORIZATION_REDIRECT_URI: 'not a uri' }), [/^PORTOLAN_AUTHORIZATION_REDIRECT_URI /]);
  t.match(problems({ PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS: '0' }), [/^PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS /]);
  t.match(problems({ PORTOLAN_ACCESS_SESSION_MAX_TOKEN_LENGTH: '70000' }), [/^PORTOLAN_ACCESS_SESSION_MAX_TOKEN_LENGTH /]);
  t.match(problems({ PORTOLAN_AUTHORIZATION_SCOPE: '' }), [/^PORTOLAN_AUTHORIZATION_SCOPE /]);
});

t.test('the lifetime, the token limit and the authorization request come from the settings', async (t) => {
  const { clock, sessions } = await wired(t, {
    PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS: '10',
    PORTOLAN_ACCESS_SESSION_MAX_TOKEN_LENGTH: '20',
    PORTOLAN_AUTHORIZATION_URL: 'https://idp.example.net/oauth2/authorize?p=B2C_1_signin',
    PORTOLAN_AUTHORIZATION_CLIENT_ID: 'client 42',
    PORTOLAN_AUTHORIZATION_REDIRECT_URI: 'https://app.example.net/cb?x=1&y=2',
    PORTOLAN_AUTHORIZATION_SCOPE: 'openid email offline_access',
  });
  const upn = "o'brien+test&prompt=none@corp.example.com";
  const session = await sessions.create({
    [USER_PRINCIPAL_NAME]: upn,
    'session.oauth.client.last.id_token': 'e30.e30.c2lnbmF0dXJlLWxvbmc',
  });
  t.equal(session.expiresMs - session.createdMs, 10_000, 'lives 10 s');
  t.match(await sessions.runJwtParse(session.id), {
    ok: false,
    error: { code: 'invalidToken', message: /is 27 characters long; the limit is 20$/ },
  });
  const redirect = await sessions.authorizationRedirect(session.id);
  const location = new URL(redirect.ok ? redirect.value : 'about:blank');
  t.equal(`${location.origin}${location.pathname}`, 'https://idp.example.net/oauth2/authorize');
  t.same(
    Object.fromEntries([...location.searchParams].filter(([k]) => k !== 'state')),
    {
      p: 'B2C_1_signin',
      response_type: 'code',
      client_id: 'client 42',
      redirect_uri: 'https://app.example.net/cb?x=1&y=2',
      scope: 'openid email offline_access',
      login_hint: upn,
    },
    'every value comes back exactly: the hint adds no parameter',
  );
  t.match(location.searchParams.get('state'), /^[A-Za-z0-9_-]{22}$/, '128 random bits');
  clock.advance(10_000);
  t.match(await sessions.get(session.id), { ok: false, error: { code: 'sessionNotFound' } }, 'gone after 10 s');
});

t.test('expired rows are swept on a create at most once a minute', async (t) => {
  const { database, clock, sessions } = await wired(t, { PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS: '10' });
  const rows = async () => (await database.query('SELECT id FROM access_sessions ORDER BY created_ms')).map((r) => r.id);
  const a = await sessions.create({});
  clock.advance(20_000);
  const b = await sessions.create({});
  t.same(await rows(), [a.id, b.id], '20 s after the last sweep: the expired row is still stored');
  t.match(await sessions.get(a.id), { ok: false, error: { code: 'sessionNotFound' } }, 'but it is gone for every operation');
  clock.advance(40_000);
  const c = await sessions.create({});
  t.same(await rows(), [c.id], '60 s after the last sweep: both expired rows are swept');
});
