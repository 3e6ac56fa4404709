import t from 'tap';
import { request } from 'node:http';
import { connect } from 'node:net';
import type { Config } from '../app/config.ts';
import { startTestSystem } from '../app/test-system.ts';
import type { TapTest } from '../lib/tap-test.ts';

// The diagnostics login server (C, the login role) against a hostile browser page and hostile headers:
// login CSRF (a form posted from another site must not log the browser in) and the login redirect (its
// Location never comes from what the request says about itself).

const LOGIN_PATH = '/resource/loginAction.jsp';
const LIST_PATH = '/snapshot-analyzer/api/snapshots';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const ADMIN = { adminUser: 'admin', adminPassword: 'login csrf admin pw' };
const GOOD_FORM = `userid=admin&passwd=${encodeURIComponent(ADMIN.adminPassword)}`;
const CROSS_SITE =
  'Login refused: the request comes from another site (Origin, Referer or Sec-Fetch-Site). Log in from a page of this service or from a script.';

type Answer = { status: number; location: string | undefined; cookies: string[]; body: string };

/** POSTs the login form with exactly these headers (Host included: fetch would not send ours). */
function postLogin(loginUrl: string, headers: Record<string, string>, body = GOOD_FORM, path = LOGIN_PATH): Promise<Answer> {
  const { hostname, port } = new URL(loginUrl);
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: hostname, port, path, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            location: response.headers.location,
            cookies: response.headers['set-cookie'] ?? [],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

async function startLogin(t: TapTest, config: Partial<Config> = {}) {
  const { system } = await startTestSystem(t, { config: { ...ADMIN, ...config } });
  const loginUrl = system.url('login');
  const loginPort = new URL(loginUrl).port;
  const diagnosticsPort = new URL(system.url('diagnostics')).port;
  return {
    loginUrl,
    loginPort,
    diagnosticsPort,
    listening: system.url('diagnostics'),
    post: (headers: Record<string, string>, body?: string, path?: string) => postLogin(loginUrl, headers, body, path),
  };
}

/** A refused cross-site login: 403 in C's shape, no cookie, no redirect, nothing of the request repeated. */
function assertRefused(t: TapTest, answer: Answer, what: string) {
  t.equal(answer.status, 403, `${what}: 403`);
  t.same(answer.cookies, [], `${what}: no cookie`);
  t.equal(answer.location, undefined, `${what}: no redirect`);
  t.notMatch(answer.body, /evil|attacker|admin|pw/, `${what}: nothing of the request is repeated`);
}

/** A login that went through: 302 with both cookies. */
function assertLoggedIn(t: TapTest, answer: Answer, what: string) {
  t.equal(answer.status, 302, `${what}: 302`);
  t.equal(answer.cookies.length, 2, `${what}: both cookies`);
}

t.test(
  'C-login-cross-site-form: a form posted from another site is 403 in the error shape, sets no cookie and costs no credential check',
  async (t) => {
    const login = await startLogin(t, { loginBackoffFailures: 2 });
    const browser = {
      origin: 'https://evil.example',
      referer: 'https://evil.example/win-a-prize.html',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'navigate',
    };
    const xml = await login.post(browser);
    assertRefused(t, xml, 'XML');
    t.equal(xml.body, `<error><code>403</code><message>${CROSS_SITE}</message></error>`, 'XML without Accept');
    const json = await login.post({ ...browser, accept: JSON_TYPE });
    assertRefused(t, json, 'JSON');
    t.same(JSON.parse(json.body), { code: 403, message: CROSS_SITE });
    // Refused before the password is looked at: wrong passwords from another site do not slow the real user down.
    for (let i = 0; i < 5; i++)
      assertRefused(t, await login.post(browser, `userid=admin&passwd=guess-${i}`), `a guess from another site (${i})`);
    assertLoggedIn(t, await login.post({}), 'the administrator right after, from a script');
  },
);

t.test('C-login-origin-null: Origin null (a sandboxed frame, a data: page, a redirect) is refused', async (t) => {
  const login = await startLogin(t);
  assertRefused(t, await login.post({ origin: 'null' }), 'Origin null');
  assertRefused(t, await login.post({ origin: 'null', 'sec-fetch-site': 'same-origin' }), 'Origin null claiming same-origin');
  assertRefused(
    t,
    await login.post({ origin: 'null', referer: `http://localhost:${login.loginPort}/` }),
    'Origin null with a Referer of ours',
  );
});

t.test('C-login-origin-mismatch: an Origin at another port, scheme or look-alike name, or not an origin at all, is refused', async (t) => {
  const login = await startLogin(t);
  const own = `http://localhost:${login.loginPort}`;
  for (const origin of [
    'http://localhost:1',
    `https://localhost:${login.loginPort}`,
    `http://localhost:${login.loginPort}.evil.example`,
    `http://localhost.evil.example:${login.loginPort}`,
    `http://evil.example:${login.loginPort}`,
    `ftp://localhost:${login.loginPort}`,
    `${own}/path`,
    `http://user@localhost:${login.loginPort}`,
    `${own}, https://evil.example`,
    '',
    'evil',
  ]) {
    assertRefused(t, await login.post({ host: `localhost:${login.loginPort}`, origin }), `Origin ${JSON.stringify(origin)}`);
  }
  assertLoggedIn(
    t,
    await login.post({ host: `localhost:${login.loginPort}`, origin: own, 'sec-fetch-site': 'same-origin' }),
    'its own origin',
  );
  assertLoggedIn(
    t,
    await login.post({
      host: `localhost:${login.loginPort}`,
      origin: `http://localhost:${login.diagnosticsPort}`,
      'sec-fetch-site': 'same-site',
    }),
    "the diagnostics role's origin",
  );
  assertLoggedIn(
    t,
    await login.post({ host: `127.0.0.1:${login.loginPort}`, origin: `http://127.0.0.1:${login.loginPort}` }),
    'its own origin by address',
  );
});

t.test('C-login-referer-other-site: without an Origin, a Referer from another site (or not a URL) is refused', async (t) => {
  const login = await startLogin(t);
  for (const referer of [
    'https://evil.example/page',
    `http://localhost:${login.loginPort}.evil.example/`,
    `https://localhost:${login.loginPort}/`,
    'about:blank',
    'not a url',
    '',
  ]) {
    assertRefused(t, await login.post({ referer }), `Referer ${JSON.stringify(referer)}`);
  }
  assertLoggedIn(t, await login.post({ referer: `http://localhost:${login.loginPort}/login.html` }), 'a Referer of its own');
  assertLoggedIn(t, await login.post({ referer: `http://127.0.0.1:${login.diagnosticsPort}/docs` }), "a Referer of the diagnostics role's");
});

t.test(
  'C-login-fetch-metadata: Sec-Fetch-Site cross-site or an unknown value is refused; same-site only from an origin of ours',
  async (t) => {
    const login = await startLogin(t);
    assertRefused(t, await login.post({ 'sec-fetch-site': 'cross-site' }), 'cross-site without Origin');
    assertRefused(
      t,
      await login.post({ 'sec-fetch-site': 'cross-site', origin: `http://localhost:${login.loginPort}` }),
      'cross-site with an Origin of ours',
    );
    assertRefused(t, await login.post({ 'sec-fetch-site': 'same-origin, cross-site' }), 'two values');
    assertRefused(t, await login.post({ 'sec-fetch-site': 'trust-me' }), 'an unknown value');
    assertRefused(
      t,
      await login.post({ 'sec-fetch-site': 'same-site', origin: 'http://localhost:1' }),
      'same-site from another port of the same host',
    );
    assertLoggedIn(t, await login.post({ 'sec-fetch-site': 'none' }), 'none (the address typed in the browser)');
    assertLoggedIn(
      t,
      await login.post({
        'sec-fetch-site': 'same-origin',
        origin: `http://localhost:${login.loginPort}`,
        host: `localhost:${login.loginPort}`,
      }),
      'same-origin',
    );
    assertLoggedIn(t, await login.post({}), 'a script that sends none of these headers');
  },
);

t.test('C-login-cookie-domain-sites: with a cookie domain its names share the login (https behind TLS); look-alikes do not', async (t) => {
  const login = await startLogin(t, { diagnosticsCookieDomain: 'example.com', diagnosticsSecureCookies: true });
  for (const origin of ['https://example.com.evil.net', 'https://evilexample.com', 'http://app.example.com', 'https://example.co']) {
    assertRefused(t, await login.post({ origin, 'sec-fetch-site': 'same-site' }), `Origin ${origin}`);
  }
  assertLoggedIn(
    t,
    await login.post({ origin: 'https://app.example.com', 'sec-fetch-site': 'same-site' }),
    'a sibling name under the cookie domain',
  );
  assertLoggedIn(t, await login.post({ origin: 'https://example.com:8443' }), 'the cookie domain itself at another port');
});

t.test('C-login-redirect-host: the Location never reflects an unlisted Host, X-Forwarded-Host or a redirect parameter', async (t) => {
  const login = await startLogin(t);
  const configured = `${login.listening}${LIST_PATH}`;
  for (const host of [
    'evil.example',
    `evil.example:${login.loginPort}`,
    `localhost:1`,
    `localhost:${login.loginPort}.evil.example`,
    'user@evil.example',
    `evil.example@localhost:${login.loginPort}`,
    `[::2]:${login.loginPort}`,
  ]) {
    const answer = await login.post({ host });
    t.equal(answer.status, 302);
    t.equal(answer.location, configured, `Host ${host}: the configured URL`);
  }
  const listed = `http://localhost:${login.diagnosticsPort}${LIST_PATH}`;
  t.equal((await login.post({ host: `localhost:${login.loginPort}` })).location, listed, 'localhost (curl -L keeps its host-only cookie)');
  t.equal((await login.post({ host: `LocalHost:${login.loginPort}` })).location, listed, 'a name in capitals, lower-cased');
  t.equal((await login.post({ host: `[::1]:${login.loginPort}` })).location, `http://[::1]:${login.diagnosticsPort}${LIST_PATH}`);
  t.equal(
    (await login.post({ host: `localhost:${login.loginPort}`, 'x-forwarded-host': 'evil.example' })).location,
    listed,
    'X-Forwarded-Host is never read',
  );
  for (const query of ['next=//evil.example', 'return=https://evil.example/', 'redirect=/%5Cevil.example', 'next=javascript:alert(1)']) {
    const answer = await login.post({ host: `localhost:${login.loginPort}` }, GOOD_FORM, `${LOGIN_PATH}?${query}`);
    t.ok(
      answer.location === listed || answer.status === 400,
      `?${query} takes no part in the redirect (${answer.status} ${answer.location})`,
    );
  }
  // CR or LF inside a Host never reach a handler: the HTTP parser refuses them.
  for (const bad of ['evil.example\rX-Injected: 1', 'evil.example\nX-Injected: 1']) {
    const received = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(login.loginPort), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.end(
        `POST ${LOGIN_PATH} HTTP/1.1\r\nHost: ${bad}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${GOOD_FORM.length}\r\nConnection: close\r\n\r\n${GOOD_FORM}`,
      );
    });
    t.match(received, /^HTTP\/1\.1 400 /, `Host with ${JSON.stringify(bad.slice(12, 13))}: 400`);
    t.notMatch(received, /evil|set-cookie/i, 'no cookie, nothing repeated');
  }
});
