import t from 'tap';
import { captureLogs } from '../../lib/test-logger.ts';
import { createClient } from '../../../generated/access-session/client/index.ts';
import * as sdk from '../../../generated/access-session/sdk.gen.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { EXAMPLE_AFTER_PARSE, EXAMPLE_PARSED, EXAMPLE_TOKEN, SESSION_INPUT } from './spec-examples.ts';
import { ID_TOKEN, USER_PRINCIPAL_NAME } from './variables.ts';

// Response validation is on in the test system: every answer below is also checked against
// specs/access-session.yaml (an answer that breaks it would arrive as a 500 naming the violation).

const PASSWORD = 'c0rrect-Horse-battery';
const ADMIN = { adminUser: 'admin', adminPassword: PASSWORD };
const LIFETIME_MS = 300_000;

async function startGateway(t: TapTest) {
  const { lines, logger } = captureLogs();
  const { system, clock } = await startTestSystem(t, { config: ADMIN, logger });
  const baseUrl = system.url('gateway');
  const client = createClient({ baseUrl, auth: `admin:${PASSWORD}` });
  const create = async (variables: Record<string, string>) => {
    const { data, response } = await sdk.createAccessSession({ client, body: { variables } });
    if (response!.status !== 201) throw new Error(`session not created: ${response!.status}`);
    return data!;
  };
  const authorize = (sessionId: string, prompt?: 'login' | 'none' | 'consent' | 'select_account') =>
    sdk.getAuthorizationRedirect({ client, path: { sessionId }, ...(prompt ? { query: { prompt } } : {}), redirect: 'manual' });
  return { system, clock, baseUrl, client, create, authorize, logLines: lines };
}

t.test('access sessions on one running gateway', async (t) => {
  // One system for these subtests (starting one takes seconds); they run in order and each
  // makes its own sessions. The clock is the system's fake clock.
  const { system, clock, baseUrl, client, create, authorize, logLines } = await startGateway(t);

  t.test('the seed flow over HTTP: create, run jwt-parse, read, authorize with login_hint, delete', async (t) => {
    const created = await sdk.createAccessSession({ client, body: { variables: SESSION_INPUT } });
    t.equal(created.response!.status, 201);
    const session = created.data!;
    t.match(session.id, /^[0-9a-f]{32}$/, 'an unguessable id: 128 random bits in hex');
    t.equal(created.response!.headers.get('location'), `/access/sessions/${session.id}`);
    t.same(session, {
      id: session.id,
      variables: SESSION_INPUT,
      createdAt: clock.now().toISOString(),
      expiresAt: new Date(clock.nowMs() + LIFETIME_MS).toISOString(),
    });
    const sessionId = session.id;

    const ran = await sdk.runJwtParseAgent({ client, path: { sessionId } });
    t.equal(ran.response!.status, 200);
    t.same(ran.data, { agent: 'jwt-parse', sessionId, variables: EXAMPLE_PARSED }, 'the variables of the spec example');

    const read = await sdk.getAccessSession({ client, path: { sessionId } });
    t.equal(read.response!.status, 200);
    t.same(read.data?.variables, EXAMPLE_AFTER_PARSE, 'the session holds the input and the parsed variables, as the spec example');

    const redirect = await authorize(sessionId);
    t.equal(redirect.response!.status, 302);
    t.equal(redirect.response!.headers.get('cache-control'), 'no-store');
    const raw = redirect.response!.headers.get('location')!;
    const location = new URL(raw);
    t.equal(`${location.origin}${location.pathname}`, 'https://login.example.com/common/oauth2/v2.0/authorize');
    t.same([...location.searchParams.keys()], ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'login_hint']);
    t.match(Object.fromEntries(location.searchParams), {
      response_type: 'code',
      client_id: 'portolan-gateway',
      redirect_uri: 'https://localhost:8080/oauth/client/redirect',
      scope: 'openid profile',
      state: /^[A-Za-z0-9_-]{22}$/,
      login_hint: 'alice@example.com',
    });
    t.match(raw, /&scope=openid%20profile&/, 'percent-encoded as the spec example');
    t.match(raw, /&login_hint=alice%40example\.com$/);
    const again = new URL((await authorize(sessionId)).response!.headers.get('location')!);
    t.not(again.searchParams.get('state'), location.searchParams.get('state'), 'a fresh state for each redirect');
    const withPrompt = new URL((await authorize(sessionId, 'login')).response!.headers.get('location')!);
    t.equal(withPrompt.searchParams.get('prompt'), 'login', 'prompt is added when asked for');

    const deleted = await sdk.deleteAccessSession({ client, path: { sessionId } });
    t.equal(deleted.response!.status, 204);
    const gone = { error: 'session not found', 'error-message': `no access session ${sessionId} (unknown or expired)` };
    const afterDelete = await sdk.getAccessSession({ client, path: { sessionId } });
    t.equal(afterDelete.response!.status, 404);
    t.same(afterDelete.error, gone);
    t.equal((await sdk.deleteAccessSession({ client, path: { sessionId } })).response!.status, 404, 'a second delete finds nothing');
    t.equal((await sdk.runJwtParseAgent({ client, path: { sessionId } })).response!.status, 404);
    t.equal((await authorize(sessionId)).response!.status, 404);

    const [, payload] = EXAMPLE_TOKEN.split('.');
    t.notOk(
      logLines.some((line) => line.includes(payload!) || line.includes(PASSWORD)),
      'no log line holds the token or the password',
    );
    t.ok(
      logLines.some((line) => line.includes('"operationId":"runJwtParseAgent"')),
      'the requests were logged',
    );
  });

  t.test('a session lives 300 seconds from its creation; expired rows are swept', async (t) => {
    const { id: sessionId } = await create(SESSION_INPUT);
    clock.advance(LIFETIME_MS - 1);
    t.equal((await sdk.getAccessSession({ client, path: { sessionId } })).response!.status, 200, 'live 1 ms before its end');
    clock.advance(1);
    const expired = await sdk.getAccessSession({ client, path: { sessionId } });
    t.equal(expired.response!.status, 404, 'gone at 300 s');
    t.same(expired.error, { error: 'session not found', 'error-message': `no access session ${sessionId} (unknown or expired)` });
    t.equal((await sdk.runJwtParseAgent({ client, path: { sessionId } })).response!.status, 404);
    t.equal((await authorize(sessionId)).response!.status, 404);
    t.equal((await sdk.deleteAccessSession({ client, path: { sessionId } })).response!.status, 404);

    t.same(
      (await system.database.query('SELECT id FROM access_sessions')).map((r) => r.id),
      [sessionId],
      'the expired row is still there',
    );
    const { id: next } = await create({});
    t.same(
      (await system.database.query('SELECT id FROM access_sessions')).map((r) => r.id),
      [next],
      'the next create swept it',
    );
  });

  t.test('wrong or missing administrative credentials get 401 on every operation', async (t) => {
    const { id: sessionId } = await create(SESSION_INPUT);
    const path = { sessionId };
    const calls = (client: ReturnType<typeof createClient>) =>
      [
        ['createAccessSession', () => sdk.createAccessSession({ client, body: { variables: {} } })],
        ['getAccessSession', () => sdk.getAccessSession({ client, path })],
        ['runJwtParseAgent', () => sdk.runJwtParseAgent({ client, path })],
        ['getAuthorizationRedirect', () => sdk.getAuthorizationRedirect({ client, path, redirect: 'manual' })],
        ['deleteAccessSession', () => sdk.deleteAccessSession({ client, path })],
      ] as const;
    const cases = [
      ['no credentials', createClient({ baseUrl }), 'administrative credentials are required'],
      ['a wrong password', createClient({ baseUrl, auth: 'admin:not-the-password' }), 'invalid administrative credentials'],
      ['an unknown user', createClient({ baseUrl, auth: `root:${PASSWORD}` }), 'invalid administrative credentials'],
      ['a bearer token', createClient({ baseUrl, headers: { authorization: `Bearer ${PASSWORD}` } }), 'invalid administrative credentials'],
    ] as const;
    for (const [label, client, message] of cases) {
      for (const [operation, call] of calls(client)) {
        const { response, error } = await call();
        t.equal(response!.status, 401, `${label}: ${operation} 401`);
        t.same(error, { error: 'unauthorized', 'error-message': message });
        t.equal(response!.headers.get('www-authenticate'), 'Basic realm="portolan-gateway"');
      }
    }
    const admin = createClient({ baseUrl, auth: `admin:${PASSWORD}` });
    // Five wrong passwords for admin in a row started the login backoff: even the right one waits.
    t.equal((await sdk.getAccessSession({ client: admin, path })).response!.status, 401, 'the right password waits out the backoff');
    clock.advance(60_000);
    t.equal((await sdk.getAccessSession({ client: admin, path })).response!.status, 200, 'the session is untouched');
  });

  t.test('409 when the variable an operation needs is not in the session', async (t) => {
    const { id: directoryOnly } = await create({ [USER_PRINCIPAL_NAME]: 'bob@corp.example.com' });
    const noToken = await sdk.runJwtParseAgent({ client, path: { sessionId: directoryOnly } });
    t.equal(noToken.response!.status, 409);
    t.same(noToken.error, { error: 'missing session variable', 'error-message': `${ID_TOKEN} is not set in session ${directoryOnly}` });

    const { id: tokenOnly } = await create({ [ID_TOKEN]: EXAMPLE_TOKEN });
    const noUpn = await authorize(tokenOnly);
    t.equal(noUpn.response!.status, 409);
    t.same(noUpn.error, {
      error: 'missing session variable',
      'error-message': `${USER_PRINCIPAL_NAME} is not set in session ${tokenOnly}`,
    });
    t.equal(noUpn.response!.headers.get('location'), null, 'no redirect');

    const { id: emptyUpn } = await create({ [USER_PRINCIPAL_NAME]: '' });
    const empty = await authorize(emptyUpn);
    t.equal(empty.response!.status, 409);
    t.same(empty.error, { error: 'missing session variable', 'error-message': `${USER_PRINCIPAL_NAME} is empty in session ${emptyUpn}` });
  });

  t.test('a malformed identity token gets 400 and sets nothing', async (t) => {
    const [header, payload, signature] = EXAMPLE_TOKEN.split('.') as [string, string, string];
    const longHeader = `${header}${'x'.repeat((5 - (header.length % 4)) % 4 || 4)}`;
    const cases = [
      [
        'five parts (an encrypted token)',
        `${header}.${payload}.${signature}.e30.e30`,
        'session.oauth.client.last.id_token has 5 dot-separated parts; 3 expected',
      ],
      [
        'a header of length 1 mod 4',
        `${longHeader}.${payload}.${signature}`,
        `header part is not valid base64url: length ${longHeader.length} is 1 mod 4`,
      ],
      [
        'a character outside the alphabet',
        `${header}.${payload.slice(0, 17)}*${payload.slice(18)}.${signature}`,
        "payload part is not valid base64url: invalid character '*' at position 17",
      ],
      [
        'an oversized token',
        `${header}.${payload}.${'s'.repeat(20480 - header.length - payload.length - 2)}`,
        'session.oauth.client.last.id_token is 20480 characters long; the limit is 16384',
      ],
    ] as const;
    t.equal(longHeader.length % 4, 1, 'the lengthened header is 1 mod 4');
    for (const [label, token, message] of cases) {
      const variables = { [ID_TOKEN]: token, [USER_PRINCIPAL_NAME]: 'alice@example.com' };
      const { id: sessionId } = await create(variables);
      const ran = await sdk.runJwtParseAgent({ client, path: { sessionId } });
      t.equal(ran.response!.status, 400, `${label}: 400`);
      t.same(ran.error, { error: 'invalid token', 'error-message': message });
      t.same((await sdk.getAccessSession({ client, path: { sessionId } })).data?.variables, variables, `${label}: nothing was set`);
    }
    t.notOk(
      logLines.some((line) => line.includes(payload)),
      'no log line holds the token',
    );
  });

  t.test('running the agent again overwrites the variables it sets and keeps every other', async (t) => {
    const { id: sessionId } = await create({
      ...SESSION_INPUT,
      'session.oauth.jwt.payload.last.name': 'stale from an earlier run',
      'custom.variable': 'kept',
    });
    const first = await sdk.runJwtParseAgent({ client, path: { sessionId } });
    const second = await sdk.runJwtParseAgent({ client, path: { sessionId } });
    t.same(second.data, first.data, 'the same variables each run');
    t.same((await sdk.getAccessSession({ client, path: { sessionId } })).data?.variables, {
      ...EXAMPLE_AFTER_PARSE,
      'custom.variable': 'kept',
    });
  });

  t.test('requests outside the spec get 400 in the gateway shape before any handler runs', async (t) => {
    const badId = await sdk.getAccessSession({ client, path: { sessionId: 'bad*id' } });
    t.equal(badId.response!.status, 400);
    t.match(badId.error, { error: String, 'error-message': /sessionId/ });
    const badName = await sdk.createAccessSession({ client, body: { variables: { 'session oauth': 'x' } } });
    t.equal(badName.response!.status, 400);
    t.match(badName.error, { error: String, 'error-message': String });
    const badPrompt = await fetch(`${baseUrl}/access/sessions/abc/authorize?prompt=always`, {
      headers: { authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` },
      redirect: 'manual',
    });
    t.equal(badPrompt.status, 400);
    t.match(await badPrompt.json(), { error: String, 'error-message': /prompt/ });
  });
});
