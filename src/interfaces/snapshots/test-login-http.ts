// Test helper: the login server and the session scheme over real HTTP, through the whole system.
import type { Config } from '../../app/config.ts';
import { startTestSystem } from '../../app/test-system.ts';
import type { TapTest } from '../../lib/tap-test.ts';

const LOGIN_PATH = '/resource/loginAction.jsp';
const LIST_PATH = '/snapshot-analyzer/api/snapshots';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const LIFETIME_S = 28_800;

/** A running system as the login tests need it. */
export type LoginSystem = {
  /** The login role's and the diagnostics role's base URLs. */
  loginUrl: string;
  diagnosticsUrl: string;
  admin: { username: string; password: string };
  /** Adds a user to the diagnostics access profile. */
  addDiagnosticsUser(userid: string, password: string): Promise<void>;
};

/**
 * Starts a system whose session cookies carry `domain` (empty: host-only) and, when `secure`, `Secure`;
 * `publicUrl` is PORTOLAN_DIAGNOSTICS_PUBLIC_URL (default empty).
 */
export type StartLoginSystem = (t: TapTest, cookies: { domain: string; secure: boolean; publicUrl?: string }) => Promise<LoginSystem>;

const ADMIN_PASSWORD = 'diagnostics admin pw';

/** The system as src/app wires it, the settings from the configuration. */
export const startWiredSystem: StartLoginSystem = async (t, cookies) => {
  const overrides: Partial<Config> = {
    adminPassword: ADMIN_PASSWORD,
    diagnosticsCookieDomain: cookies.domain,
    diagnosticsSecureCookies: cookies.secure,
    diagnosticsPublicUrl: cookies.publicUrl ?? '',
  };
  const { system, config } = await startTestSystem(t, { config: overrides });
  const profile = config.diagnosticsAccessProfile;
  return {
    loginUrl: system.url('login'),
    diagnosticsUrl: system.url('diagnostics'),
    admin: { username: config.adminUser, password: ADMIN_PASSWORD },
    addDiagnosticsUser: async (userid, password) => void (await system.accounts.setPassword(profile, userid, password)),
  };
};

/** POSTs the login form; never follows the redirect (the cookies are on the 302 itself). */
const login = (system: LoginSystem, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${system.loginUrl}${LOGIN_PATH}`, { method: 'POST', redirect: 'manual', headers, body: new URLSearchParams(form) });

/** A cookie jar of one client: the name=value pairs of the Set-Cookie lines, sent back as one Cookie header. */
function jarOf(setCookies: readonly string[]): string {
  return setCookies.map((line) => line.split(';', 1)[0]!.trim()).join('; ');
}

/** The parts of an answer two refusals must share byte for byte (the date and request id differ by nature). */
async function comparable(response: Response) {
  const headers = [...response.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id');
  return { status: response.status, headers, body: Buffer.from(await response.arrayBuffer()).toString('hex') };
}

/**
 * The login server and the `ssoSession` scheme over real HTTP: the form login's 302 and its two
 * cookies, one 401 for every refusal with no cookie, the cookie jar opening the diagnostics role on
 * another port, and the cookies' Domain and Secure when configured.
 */
export async function loginOverHttp(t: TapTest, start: StartLoginSystem): Promise<void> {
  t.test('host-only cookies over plain HTTP', async (t) => {
    const system = await start(t, { domain: '', secure: false });
    await system.addDiagnosticsUser('alice@example.com', 'alice pw');
    const list = `${system.diagnosticsUrl}${LIST_PATH}`;

    t.test('a form login answers 302 with the session cookie and sso_completed=1', async (t) => {
      const answer = await login(system, { userid: 'alice@example.com', passwd: 'alice pw' });
      t.equal(answer.status, 302);
      t.equal(answer.headers.get('location'), list, "to the diagnostics role's snapshot list");
      t.equal(await answer.text(), '', 'no body');
      const cookies = answer.headers.getSetCookie();
      t.equal(cookies.length, 2, 'Set-Cookie twice');
      t.match(cookies[0], new RegExp(`^ssosession=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${LIFETIME_S}$`));
      t.equal(cookies[1], `sso_completed=1; Path=/; SameSite=Lax; Max-Age=${LIFETIME_S}`);
      t.notMatch(cookies.join('\n'), /Domain=|Secure/, 'host-only, not Secure, unless configured');
    });

    t.test('the cookie jar opens the diagnostics role; no cookie or a bogus one is 403', async (t) => {
      const answer = await login(system, { userid: 'alice@example.com', passwd: 'alice pw' });
      const jar = jarOf(answer.headers.getSetCookie());
      const withJar = await fetch(list, { headers: { cookie: jar, accept: JSON_TYPE } });
      t.not(withJar.status, 403, `past the session scheme (answered ${withJar.status})`);
      await withJar.arrayBuffer();
      const followed = await fetch(answer.headers.get('location')!, { headers: { cookie: jar, accept: JSON_TYPE } });
      t.not(followed.status, 403, 'following the redirect with the new cookies lands on an answer of the API');
      await followed.arrayBuffer();

      const without = await fetch(list, { headers: { accept: JSON_TYPE } });
      t.equal(without.status, 403);
      t.same(await without.json(), { code: 403, message: 'A session is required; log in first.' });
      const bogus = await fetch(list, { headers: { cookie: 'ssosession=bogus; sso_completed=1', accept: JSON_TYPE } });
      t.equal(bogus.status, 403);
      t.same(await bogus.json(), { code: 403, message: 'The session is unknown or expired; log in again.' });
      const completedOnly = await fetch(list, { headers: { cookie: 'sso_completed=1' } });
      t.equal(completedOnly.status, 403, 'sso_completed alone opens nothing');
      t.match(await completedOnly.text(), /^<error><code>403<\/code>/, 'XML without Accept');
    });

    t.test('a login at localhost redirects to localhost, so following it (curl -L) sends the host-only cookie back', async (t) => {
      const atLocalhost = { ...system, loginUrl: system.loginUrl.replace('127.0.0.1', 'localhost') };
      const answer = await login(atLocalhost, { userid: 'alice@example.com', passwd: 'alice pw' });
      const location = answer.headers.get('location')!;
      t.equal(location, `${system.diagnosticsUrl.replace('127.0.0.1', 'localhost')}${LIST_PATH}`);
      const followed = await fetch(location, { headers: { cookie: jarOf(answer.headers.getSetCookie()), accept: JSON_TYPE } });
      t.equal(followed.status, 200, 'the snapshot list');
      await followed.arrayBuffer();
    });

    t.test('a browser page of the service logs in; a page of another site gets 403 and no cookie', async (t) => {
      const own = await login(
        system,
        { userid: 'alice@example.com', passwd: 'alice pw' },
        { origin: system.loginUrl, 'sec-fetch-site': 'same-origin' },
      );
      t.equal(own.status, 302, "the login role's own origin");
      await own.arrayBuffer();
      const api = await login(
        system,
        { userid: 'alice@example.com', passwd: 'alice pw' },
        { origin: system.diagnosticsUrl, 'sec-fetch-site': 'same-site' },
      );
      t.equal(api.status, 302, "the diagnostics role's origin (its /docs page)");
      await api.arrayBuffer();
      const other = await login(
        system,
        { userid: 'alice@example.com', passwd: 'alice pw' },
        { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site', accept: JSON_TYPE },
      );
      t.equal(other.status, 403);
      t.same(other.headers.getSetCookie(), [], 'no Set-Cookie at all');
      t.same(await other.json(), {
        code: 403,
        message:
          'Login refused: the request comes from another site (Origin, Referer or Sec-Fetch-Site). Log in from a page of this service or from a script.',
      });
    });

    t.test('the administrative account logs in too', async (t) => {
      const answer = await login(system, { userid: system.admin.username, passwd: system.admin.password });
      t.equal(answer.status, 302);
      await answer.arrayBuffer();
      const listed = await fetch(list, { headers: { cookie: jarOf(answer.headers.getSetCookie()) } });
      t.not(listed.status, 403);
      await listed.arrayBuffer();
    });

    t.test('a wrong password and an unknown user get byte-identical 401 answers with no cookie', async (t) => {
      for (const accept of [undefined, JSON_TYPE]) {
        const headers: Record<string, string> = accept ? { accept } : {};
        const wrong = await login(system, { userid: 'alice@example.com', passwd: 'not alice pw' }, headers);
        const unknown = await login(system, { userid: 'nobody@example.com', passwd: 'not alice pw' }, headers);
        t.equal(wrong.status, 401);
        t.same(wrong.headers.getSetCookie(), [], 'no Set-Cookie at all');
        const [a, b] = [await comparable(wrong), await comparable(unknown)];
        t.same(a, b, `the same status, headers and body (${accept ?? 'no Accept'})`);
        const text = Buffer.from(a.body, 'hex').toString('utf8');
        t.equal(
          text,
          accept
            ? '{"code":401,"message":"Invalid user id or password."}'
            : '<error><code>401</code><message>Invalid user id or password.</message></error>',
        );
        t.notMatch(text, /alice|nobody|pw/, 'nothing of the request is repeated');
      }
    });

    t.test('a bad form is 400 from the framework, with no cookie', async (t) => {
      const answer = await login(system, { userid: 'alice@example.com' }, { accept: JSON_TYPE });
      t.equal(answer.status, 400);
      t.same(answer.headers.getSetCookie(), []);
      t.match(await answer.json(), { code: 400, message: /passwd/ });
    });
  });

  t.test('Domain and Secure appear when configured', async (t) => {
    const system = await start(t, { domain: 'example.com', secure: true });
    await system.addDiagnosticsUser('alice@example.com', 'alice pw');
    const answer = await login(system, { userid: 'alice@example.com', passwd: 'alice pw' });
    t.equal(answer.status, 302);
    await answer.arrayBuffer();
    const cookies = answer.headers.getSetCookie();
    t.match(
      cookies[0],
      new RegExp(`^ssosession=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${LIFETIME_S}; Domain=example.com; Secure$`),
    );
    t.equal(cookies[1], `sso_completed=1; Path=/; SameSite=Lax; Max-Age=${LIFETIME_S}; Domain=example.com; Secure`);
  });

  t.test('behind a proxy, PORTOLAN_DIAGNOSTICS_PUBLIC_URL is the redirect and its origin may post the form', async (t) => {
    const system = await start(t, { domain: '', secure: true, publicUrl: 'https://diag.example.com/base/' });
    await system.addDiagnosticsUser('alice@example.com', 'alice pw');
    const form = { userid: 'alice@example.com', passwd: 'alice pw' };
    const answer = await login(system, form, { origin: 'https://diag.example.com', 'sec-fetch-site': 'same-origin' });
    t.equal(answer.status, 302);
    t.equal(answer.headers.get('location'), `https://diag.example.com/base${LIST_PATH}`, 'whatever the Host');
    await answer.arrayBuffer();
    const plain = await login(system, form, { origin: 'http://diag.example.com' });
    t.equal(plain.status, 403, 'not its http twin');
    await plain.arrayBuffer();
  });
}
