import t from 'tap';
import { isCrossSiteLogin } from './login-origin.ts';
import { listedHost, listenerNamesFor, diagnosticsSiteOf, type DiagnosticsSite } from './diagnostics-site.ts';

/** The roles on loopback at 8301 (login) and 8300 (diagnostics), host-only cookies, no proxy in front. */
const SITE: DiagnosticsSite = {
  listenerNames: ['localhost', '127.0.0.1', '[::1]'],
  listenerPorts: () => [8301, 8300],
  cookieDomain: '',
  secure: false,
  publicUrl: '',
};
const OWN = { host: 'localhost:8301' };

t.test("scripts and the service's own pages may log in", async (t) => {
  for (const [headers, why] of [
    [{}, 'no Origin, Referer or Sec-Fetch-Site (curl, the snapshot client)'],
    [{ ...OWN, origin: 'http://localhost:8301', 'sec-fetch-site': 'same-origin' }, 'its own origin'],
    [{ host: 'diag.lan:8301', origin: 'http://diag.lan:8301' }, 'its own origin under any name it is reached by'],
    [{ ...OWN, origin: 'http://127.0.0.1:8300', 'sec-fetch-site': 'same-site' }, "the diagnostics role's origin"],
    [{ ...OWN, origin: 'http://[::1]:8301' }, 'IPv6 loopback'],
    [{ 'sec-fetch-site': 'none' }, 'an address typed in'],
    [{ 'sec-fetch-site': 'same-site' }, 'same-site with no Origin: nothing to refuse on'],
    [{ ...OWN, referer: 'http://localhost:8300/docs#/Session' }, "a Referer of the diagnostics role's"],
    [{ ...OWN, origin: 'http://localhost:8301', referer: 'https://evil.example/' }, 'the Origin decides over a Referer'],
  ] as const)
    t.equal(isCrossSiteLogin(SITE, headers), false, why);
});

t.test('a post from any other site is cross-site', async (t) => {
  for (const [headers, why] of [
    [{ 'sec-fetch-site': 'cross-site' }, 'Sec-Fetch-Site cross-site'],
    [{ 'sec-fetch-site': 'Cross-Site' }, '... in any case'],
    [{ 'sec-fetch-site': 'same-origin, cross-site' }, 'two values'],
    [{ 'sec-fetch-site': '' }, 'empty'],
    [{ ...OWN, origin: 'null' }, 'Origin null'],
    [{ ...OWN, origin: 'http://localhost:8302' }, 'another port'],
    [{ ...OWN, origin: 'https://localhost:8301' }, 'another scheme'],
    [{ ...OWN, origin: 'http://localhost:8301/' }, 'not a serialised origin'],
    [{ ...OWN, origin: 'http://localhost' }, 'the default port'],
    [{ ...OWN, origin: 'http://a@localhost:8301' }, 'with a user'],
    [{ ...OWN, origin: '' }, 'empty Origin'],
    [{ host: 'evil.example@localhost:8301', origin: 'http://evil.example' }, 'a Host that is not a host name matches nothing'],
    [{ ...OWN, origin: 'http://localhost.evil.example:8301' }, 'a look-alike'],
    [{ ...OWN, referer: 'https://evil.example/' }, 'a Referer from another site'],
    [{ ...OWN, referer: 'data:text/html,x' }, 'a data: Referer'],
    [{ ...OWN, referer: '/relative' }, 'a Referer that is not a URL'],
    [{ ...OWN, 'sec-fetch-site': 'same-site', origin: 'http://localhost:9999' }, 'same-site from another port of the host'],
  ] as const)
    t.equal(isCrossSiteLogin(SITE, headers), true, why);
});

t.test('behind TLS with a cookie domain and a public URL', async (t) => {
  const site: DiagnosticsSite = { ...SITE, cookieDomain: 'Example.com', secure: true, publicUrl: 'https://diag.example.net:8443/base' };
  t.equal(isCrossSiteLogin(site, { origin: 'https://login.example.com' }), false, 'a name under the cookie domain');
  t.equal(isCrossSiteLogin(site, { origin: 'https://example.com:444' }), false, 'the domain itself, any port');
  t.equal(isCrossSiteLogin(site, { origin: 'http://login.example.com' }), true, 'http on a public name behind TLS');
  t.equal(isCrossSiteLogin(site, { origin: 'https://evilexample.com' }), true, 'a name that only ends like it');
  t.equal(isCrossSiteLogin(site, { origin: 'https://diag.example.net:8443' }), false, "the public URL's origin");
  t.equal(isCrossSiteLogin(site, { origin: 'https://diag.example.net' }), true, '... at its port only');
  t.equal(isCrossSiteLogin(site, { host: 'login.lan', origin: 'https://login.lan' }), false, 'its own origin is https behind TLS');
  t.equal(isCrossSiteLogin(site, { host: 'login.lan', origin: 'http://login.lan' }), true, '... not http');
  t.equal(isCrossSiteLogin(site, { origin: 'http://localhost:8301' }), false, 'the listeners themselves still serve http');
});

t.test('a site from the configuration', async (t) => {
  t.same(listenerNamesFor('0.0.0.0', 'Diag-Box'), ['localhost', '127.0.0.1', '[::1]', 'diag-box'], 'a wildcard address is no name');
  t.same(listenerNamesFor('::', ''), ['localhost', '127.0.0.1', '[::1]']);
  t.same(listenerNamesFor('fd00::5', 'box'), ['localhost', '127.0.0.1', '[::1]', '[fd00::5]', 'box'], 'IPv6 bracketed as in a Host');
  const interfaces = ['127.0.0.1', '::1', '10.0.0.5', 'FD00::5', 'fe80::1'];
  t.same(
    listenerNamesFor('0.0.0.0', 'box', interfaces),
    ['localhost', '127.0.0.1', '[::1]', '10.0.0.5', 'box'],
    "a wildcard lists the machine's IPv4 addresses: 0.0.0.0 takes no IPv6",
  );
  t.same(
    listenerNamesFor('::', 'box', interfaces),
    ['localhost', '127.0.0.1', '[::1]', '10.0.0.5', '[fd00::5]', '[fe80::1]', 'box'],
    ':: (dual stack) lists every address, IPv6 bracketed, lower case',
  );
  t.same(
    listenerNamesFor('10.0.0.5', 'box', ['192.0.2.7']),
    ['localhost', '127.0.0.1', '[::1]', '10.0.0.5', 'box'],
    'a real listening address: only itself',
  );
  const wildcard = diagnosticsSiteOf(
    {
      host: '0.0.0.0',
      ports: { login: 8301, diagnostics: 8300 },
      diagnosticsCookieDomain: '',
      diagnosticsSecureCookies: false,
      diagnosticsPublicUrl: '',
    },
    () => undefined,
    'box',
    ['10.0.0.5'],
  );
  t.same(
    listedHost(wildcard, '10.0.0.5:8301'),
    { name: '10.0.0.5', port: 8301 },
    "a Host naming one of the machine's addresses at a role's port is kept",
  );
  t.equal(listedHost(wildcard, '10.0.0.6:8301'), undefined, 'another address is not');
  t.equal(listedHost(wildcard, '10.0.0.5:22'), undefined, '... nor that address at another port');
  const config = {
    host: '127.0.0.1',
    ports: { login: 8301, diagnostics: 0 },
    diagnosticsCookieDomain: '',
    diagnosticsSecureCookies: false,
    diagnosticsPublicUrl: 'https://diag.example.com/',
  };
  const listening: Record<string, string> = { diagnostics: 'http://127.0.0.1:41234' };
  const site = diagnosticsSiteOf(config, (role) => listening[role], 'box');
  t.same(site.listenerPorts(), [8301, 41234], 'the configured port of a role elsewhere, the real port of one listening here');
  t.equal(site.publicUrl, 'https://diag.example.com', 'without its trailing slash');
  t.same(
    diagnosticsSiteOf({ ...config, ports: { login: 0, diagnostics: 0 } }, () => undefined, 'box').listenerPorts(),
    [],
    'port 0 of a role not listening here is no port',
  );
});
