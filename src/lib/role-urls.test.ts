import t from 'tap';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config.ts';
import { findFreePorts } from './free-ports.ts';
import { discoverRoles, roleUrlsFromSettings, urlHost } from './role-urls.ts';
import type { TapTest } from './tap-test.ts';

t.test('with no settings every role is on its default port on 127.0.0.1', async (t) => {
  t.same(roleUrlsFromSettings({}), {
    gateway: 'http://127.0.0.1:8080',
    mapping: 'http://127.0.0.1:8081',
    device: 'http://127.0.0.1:8100',
    central: 'http://127.0.0.1:8200',
    diagnostics: 'http://127.0.0.1:8300',
    login: 'http://127.0.0.1:8301',
  });
});

t.test("PORTOLAN_PORT_OFFSET moves every role; a role's own port wins; port 0 has no URL before the start", async (t) => {
  t.same(roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '10000', PORTOLAN_LOGIN_PORT: '9999', PORTOLAN_DEVICE_PORT: '0' }), {
    gateway: 'http://127.0.0.1:18080',
    mapping: 'http://127.0.0.1:18081',
    device: undefined,
    central: 'http://127.0.0.1:18200',
    diagnostics: 'http://127.0.0.1:18300',
    login: 'http://127.0.0.1:9999',
  });
  t.equal(roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '-80' }).gateway, 'http://127.0.0.1:8000', 'a negative offset');
});

t.test('the PORTOLAN_CONFIG file is read as the start reads it, its other settings left alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-role-urls-'));
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({ portOffset: 500, host: '0.0.0.0', ports: { central: 9200 }, logLevel: 'warn', rateLimitStore: 'memory' }),
  );
  const urls = roleUrlsFromSettings({ PORTOLAN_CONFIG: file });
  t.equal(urls.gateway, 'http://127.0.0.1:8580', 'offset and address from the file');
  t.equal(urls.central, 'http://127.0.0.1:9200', "the file's own port for one role");
  t.equal(
    roleUrlsFromSettings({ PORTOLAN_CONFIG: file, PORTOLAN_PORT_OFFSET: '7' }).gateway,
    'http://127.0.0.1:8087',
    'the environment wins',
  );
});

t.test('the address: wildcards become loopback, IPv6 goes in brackets', async (t) => {
  t.equal(roleUrlsFromSettings({ PORTOLAN_HOST: '0.0.0.0' }).mapping, 'http://127.0.0.1:8081');
  t.equal(roleUrlsFromSettings({ PORTOLAN_HOST: '::' }).mapping, 'http://[::1]:8081');
  t.equal(roleUrlsFromSettings({ PORTOLAN_HOST: '::1' }).mapping, 'http://[::1]:8081');
  t.equal(roleUrlsFromSettings({ PORTOLAN_HOST: 'localhost' }).mapping, 'http://localhost:8081');
  t.equal(urlHost('fe80::1'), '[fe80::1]');
  t.equal(urlHost('[::]'), '[::1]');
  t.equal(urlHost('192.0.2.7'), '192.0.2.7');
});

t.test('a wrong setting is the start’s error: one line each, naming the setting', async (t) => {
  const high = t.throws(() => roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '60000' })) as ConfigError;
  t.type(high, ConfigError);
  t.same(
    high.problems,
    [
      "PORTOLAN_PORT_OFFSET 60000 puts the gateway role on port 68080, outside 1..65535: choose an offset that keeps every role's port in range, or set PORTOLAN_GATEWAY_PORT",
    ],
    'one line for the offset, naming the first role it moves out of range',
  );
  const low = t.throws(() => roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '-8081', PORTOLAN_GATEWAY_PORT: '8000' })) as ConfigError;
  t.same(
    low.problems,
    [
      "PORTOLAN_PORT_OFFSET -8081 puts the mapping role on port 0, outside 1..65535: choose an offset that keeps every role's port in range, or set PORTOLAN_MAPPING_PORT",
    ],
    "a role set on its own is not the offset's",
  );
  const word = t.throws(() => roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: 'ten' })) as ConfigError;
  t.same(word.problems, ["PORTOLAN_PORT_OFFSET must be integer, got 'ten'"], 'only the offset itself, not every port after it');
  const far = t.throws(() => roleUrlsFromSettings({ PORTOLAN_PORT_OFFSET: '70000' })) as ConfigError;
  t.same(far.problems, ["PORTOLAN_PORT_OFFSET must be <= 65535, got '70000'"]);
});

/** A stub role answering GET /.well-known/portolan with `answer`. */
async function stubRole(t: TapTest, answer: (res: ServerResponse) => void) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    answer(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

t.test("discoverRoles reads the role map at the origin of any role's URL", async (t) => {
  const role = await stubRole(t, (res) =>
    json(res, 200, {
      service: 'portolan',
      version: '0.1.0',
      kind: 'reference',
      registrationHost: 'localhost:18080',
      roles: [
        { role: 'gateway', url: 'http://127.0.0.1:18080', docs: null, interfaces: ['rate-limit'] },
        { role: 'diagnostics', url: 'http://127.0.0.1:18300/', docs: 'http://127.0.0.1:18300/docs', interfaces: ['snapshots'] },
        { role: 'billing', url: 'http://127.0.0.1:1', interfaces: [] },
      ],
    }),
  );
  const found = await discoverRoles(`${role.url}/snapshot-analyzer/api/snapshots?x=1`);
  t.same(found, {
    ok: true,
    value: { kind: 'reference', version: '0.1.0', urls: { gateway: 'http://127.0.0.1:18080', diagnostics: 'http://127.0.0.1:18300' } },
  });
  t.same(role.seen, ['GET /.well-known/portolan'], 'one request, at the origin, whatever path the URL has');
});

t.test('a role map cannot send the login (and its password) to another host: only scheme and port are taken', async (t) => {
  const role = await stubRole(t, (res) =>
    json(res, 200, {
      service: 'portolan',
      roles: [
        { role: 'login', url: 'http://evil.example:8301', docs: null, interfaces: ['snapshots'] },
        { role: 'diagnostics', url: 'https://ops:pw@10.0.0.5:8300/?q=1#f', docs: null, interfaces: ['snapshots'] },
      ],
    }),
  );
  const found = await discoverRoles(role.url);
  t.same(found.ok && found.value.urls, { login: 'http://127.0.0.1:8301', diagnostics: 'https://127.0.0.1:8300' });
});

t.test('discoverRoles says in one line what is wrong', async (t) => {
  const missing = await stubRole(t, (res) => json(res, 404, { message: 'no such route' }));
  t.same(await discoverRoles(missing.url), {
    ok: false,
    error: `${missing.url} gives no Portolan role map (GET /.well-known/portolan answered 404): is it a role of Portolan (portolan start or portolan mock)?`,
  });
  const html = await stubRole(t, (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
  t.match(await discoverRoles(html.url), { ok: false, error: /answered something other than JSON\)/ });
  const other = await stubRole(t, (res) => json(res, 200, { service: 'other', roles: [] }));
  t.match(await discoverRoles(other.url), { ok: false, error: /answered JSON without "service": "portolan" and its "roles"/ });
  const badUrl = await stubRole(t, (res) => json(res, 200, { service: 'portolan', roles: [{ role: 'login', url: 'ftp://x' }] }));
  t.match(await discoverRoles(badUrl.url), { ok: false, error: /lists the login role without an http URL/ });
  const redirect = await stubRole(t, (res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
  t.match(await discoverRoles(redirect.url), { ok: false, error: /answered 302/ }, 'a redirect is not followed');

  const [closed] = await findFreePorts(1);
  t.same(await discoverRoles(`http://127.0.0.1:${closed}`), {
    ok: false,
    error: `cannot reach http://127.0.0.1:${closed} (ECONNREFUSED): is a Portolan role listening there?`,
  });
  t.same(await discoverRoles('ftp://example.com'), { ok: false, error: "'ftp://example.com' is not an http or https URL" });
  t.same(await discoverRoles('http://ops:pw@127.0.0.1:1/'), {
    ok: false,
    error: "http://127.0.0.1:1: a role's URL must not hold a user or password",
  });
});
