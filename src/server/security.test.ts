import t from 'tap';
import { authenticate, basicScheme, headerTokenScheme, type SecurityRequirement } from './security.ts';

const basicAuth = { name: 'basicAuth', type: 'http', scheme: 'basic' };
const token = { name: 'vendorAuthToken', type: 'apiKey', in: 'header', parameterName: 'X-Vendor-Auth-Token' };
const requirements: SecurityRequirement[] = [[basicAuth], [token]];

const authenticators = {
  basicAuth: basicScheme(async (header) => header === 'Basic YWRtaW46cHc=', {
    missing: 'no credentials',
    wrong: 'wrong password',
    challenge: 'Basic realm="x"',
  }),
  vendorAuthToken: headerTokenScheme('X-Vendor-Auth-Token', async (value) => (value === 'GOOD' ? { username: 'admin' } : undefined), {
    missing: 'no credentials',
    invalid: 'token unknown or expired',
  }),
};

const run = (headers: Record<string, string>) => authenticate(requirements, authenticators, { headers, cookies: {} });

t.test('either alternative lets a request in, naming the user', async (t) => {
  t.same(await run({ authorization: 'Basic YWRtaW46cHc=' }), { ok: true, principal: 'admin' });
  t.same(await run({ 'x-vendor-auth-token': 'GOOD' }), { ok: true, principal: 'admin' });
});

t.test('nothing sent: the first alternative answers (the usual way, with its challenge)', async (t) => {
  t.match(await run({}), { ok: false, error: { message: 'no credentials' }, headers: { 'www-authenticate': 'Basic realm="x"' } });
});

t.test('a credential that was sent and refused is the answer, not the absence of another', async (t) => {
  t.match(await run({ 'x-vendor-auth-token': 'EXPIRED' }), { ok: false, error: { message: 'token unknown or expired' } });
  t.match(await run({ authorization: 'Basic d3Jvbmc6cHc=' }), { ok: false, error: { message: 'wrong password' } });
});
