import t from 'tap';
import { createAuthorizationRequest, PROMPTS } from './authorization-redirect.ts';
import { AUTHORIZATION_REQUEST } from './spec-examples.ts';

const parameter = (name: string) =>
  AUTHORIZATION_REQUEST.defaultRequest.parameters.find((p: { name: string }) => p.name === name).value as string;
// The designed defaults of the spec's info.x-authorization-request.
const SETTINGS = {
  authorizationUrl: AUTHORIZATION_REQUEST.authorizationUrl.default as string,
  clientId: parameter('client_id'),
  redirectUri: parameter('redirect_uri'),
  scope: parameter('scope'),
};

t.test('with the spec defaults the redirect is exactly the spec example', async (t) => {
  const redirectTo = createAuthorizationRequest(SETTINGS);
  t.equal(
    redirectTo({ loginHint: 'alice@example.com', state: 'Jk2vXb7Qe9LmP4sT' }),
    'https://login.example.com/common/oauth2/v2.0/authorize?response_type=code&client_id=portolan-gateway&redirect_uri=https%3A%2F%2Flocalhost%3A8080%2Foauth%2Fclient%2Fredirect&scope=openid%20profile&state=Jk2vXb7Qe9LmP4sT&login_hint=alice%40example.com',
  );
});

t.test('every value is percent-encoded, so a hint cannot add or change parameters', async (t) => {
  const hint = "o'brien+test&prompt=none#x y@corp.example.com ünï";
  const location = new URL(createAuthorizationRequest(SETTINGS)({ loginHint: hint, state: 's' }));
  t.equal(location.searchParams.get('login_hint'), hint);
  t.same(location.searchParams.getAll('prompt'), [], 'no prompt was smuggled in');
  t.equal(location.hash, '');
  t.same([...location.searchParams.keys()], ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'login_hint']);
});

t.test('prompt is appended when asked for, with each offered value', async (t) => {
  const redirectTo = createAuthorizationRequest(SETTINGS);
  for (const prompt of PROMPTS) {
    const location = redirectTo({ loginHint: 'a@b', state: 's', prompt });
    t.ok(location.endsWith(`&login_hint=a%40b&prompt=${prompt}`), prompt);
  }
});

t.test('an authorization URL with a query of its own keeps it', async (t) => {
  const withQuery = createAuthorizationRequest({ ...SETTINGS, authorizationUrl: 'https://idp.example/authorize?p=B2C_1_signin' });
  t.match(withQuery({ loginHint: 'a@b', state: 's' }), /^https:\/\/idp\.example\/authorize\?p=B2C_1_signin&response_type=code&/);
  const bareQuestionMark = createAuthorizationRequest({ ...SETTINGS, authorizationUrl: 'https://idp.example/authorize?' });
  t.match(bareQuestionMark({ loginHint: 'a@b', state: 's' }), /^https:\/\/idp\.example\/authorize\?response_type=code&/);
});

t.test('a wrong authorization URL is refused when the request is compiled', async (t) => {
  for (const url of ['not a url', 'ftp://idp.example/authorize', 'https://idp.example/authorize#frag', 'https://idp.example/authorize#']) {
    t.throws(
      () => createAuthorizationRequest({ ...SETTINGS, authorizationUrl: url }),
      { message: 'authorizationUrl must be an http(s) URL without a fragment' },
      url,
    );
  }
});
