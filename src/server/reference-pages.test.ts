import t from 'tap';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import { listOperations, type OpenApiDocument } from '../lib/spec-catalog.ts';
import { startTestSystem } from '../app/test-system.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { REFERENCE_PAGE_CSP, referencePageCsp } from './reference-pages.ts';
import { servedDocument } from './reference-specs.ts';
import { SWAGGER_UI_FILES } from './swagger-ui-assets.ts';
import { operationKeys, specsOfRole, withoutServers } from './reference-test-helpers.ts';

type Answer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** One request as written: node:http sends the target unchanged (fetch would resolve `..` itself). */
function send(
  base: string,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, path: target, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Every string of a value with the ports the roles got put back to their default ports (as reference-specs.ts moved them). */
function atDefaultPorts<T>(value: T, ports: Readonly<Record<string, number>>): T {
  const back = new Map(Object.entries(ports).map(([role, port]) => [String(port), String(ROLE_DEFINITIONS[role as RoleName].defaultPort)]));
  const text = JSON.stringify(value)
    .replace(/(localhost|127\.0\.0\.1|\[::1\])(:|%3A)(\d+)/g, (all, host, colon, port) =>
      back.has(port) ? `${host}${colon}${back.get(port)}` : all,
    )
    .replace(/port (\*\*)?(\d+)(\*\*)?/g, (all, open = '', port, close = '') =>
      back.has(port) ? `port ${open}${back.get(port)}${close}` : all,
    );
  return JSON.parse(text) as T;
}

/** The value without its extensions (`x-…`), which keep the spec's own defaults. */
function withoutExtensions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExtensions);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, v]) => [key, withoutExtensions(v)]),
  );
}

/** The default ports of the roles this system runs elsewhere, as the text would name them. */
function defaultPortMentions(system: { url(role: RoleName): string }): RegExp {
  const moved = ROLE_NAMES.filter((role) => new URL(system.url(role)).port !== String(ROLE_DEFINITIONS[role].defaultPort)).map(
    (role) => ROLE_DEFINITIONS[role].defaultPort,
  );
  return new RegExp(`(localhost|127\\.0\\.0\\.1|\\[::1\\])(:|%3A)(${moved.join('|')})\\b|port (\\*\\*)?(${moved.join('|')})\\b`);
}

t.test(
  'every role serves each of its specs as YAML and JSON, equal to the file but for servers and the ports the roles run on',
  async (t) => {
    const { system } = await startTestSystem(t);
    const ports = Object.fromEntries(ROLE_NAMES.map((role) => [role, Number(new URL(system.url(role)).port)]));
    const defaultPorts = defaultPortMentions(system);
    for (const role of ROLE_NAMES) {
      const expected = specsOfRole(role);
      t.ok(expected.length >= 2, `${role} serves its own spec and health`);
      for (const { name, document } of expected) {
        const yaml = await send(system.url(role), `/openapi/${name}.yaml`);
        const json = await send(system.url(role), `/openapi/${name}.json`);
        t.equal(yaml.status, 200, `${role} ${name}.yaml`);
        t.equal(yaml.headers['content-type'], 'application/yaml');
        t.equal(json.status, 200, `${role} ${name}.json`);
        t.equal(json.headers['content-type'], 'application/json; charset=utf-8');
        const fromYaml = parseYaml(yaml.body.toString()) as OpenApiDocument;
        const fromJson = JSON.parse(json.body.toString()) as OpenApiDocument;
        t.same(fromYaml, fromJson, `${role} ${name}: the YAML and the JSON say the same`);
        // A moved port drops " in the service description" after it (the described port is no longer the one named).
        const seedless = (doc: OpenApiDocument) =>
          JSON.parse(JSON.stringify(doc).replace(/(port (\*\*)?\d+(\*\*)?) in the service description/g, '$1')) as OpenApiDocument;
        t.same(
          seedless(withoutServers(atDefaultPorts(fromJson, ports))),
          seedless(withoutServers(document)),
          `${role} ${name}: the spec file, servers and ports aside`,
        );
        t.notMatch(
          JSON.stringify(withoutExtensions(fromJson)),
          defaultPorts,
          `${role} ${name}: no text names the default port of a role that runs elsewhere`,
        );
        // Try it out calls the role that served the page: every servers list naming this role is now the relative '/'.
        const lists = [document.servers, ...Object.values(document.paths).map((item) => item.servers)];
        const servedLists = [fromJson.servers, ...Object.values(fromJson.paths).map((item) => item.servers)];
        lists.forEach((list, i) => {
          if (list?.some((s) => s['x-portolan-role'] === role))
            t.match(servedLists[i], [{ url: '/' }], `${role} ${name}: servers of this role replaced`);
          else
            t.same(
              servedLists[i]?.map((s) => s.url),
              list?.map((s) => `http://localhost:${ports[s['x-portolan-role']!]}`),
              `${role} ${name}: servers of other roles at the ports they run on`,
            );
        });
      }
      const notServed = await send(system.url(role), '/openapi/not-a-spec.json');
      t.equal(notServed.status, 404, `${role}: an unknown spec is 404`);
    }
    const mappingOnGateway = await send(system.url('gateway'), '/openapi/mapping.json');
    t.equal(mappingOnGateway.status, 404, 'a spec the role does not serve is 404 (the gateway does not pass /openapi/ to its pool)');
    const registration = JSON.parse(
      (await send(system.url('gateway'), '/openapi/client-registration.json')).body.toString(),
    ) as OpenApiDocument;
    t.match(
      registration.paths['/vendor-oauth2/v1/client-register']!.post,
      { servers: [{ url: `http://${system.config.registrationHost}` }] },
      'registration points at the registration host, the Host the gateway recognises it by',
    );
  },
);

t.test("what /docs shows of a spec is the operations its role serves, each tried on the role (or registration's host)", async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ROLE_NAMES) {
    for (const { name, document } of specsOfRole(role)) {
      const answer = await send(system.url(role), `/docs/spec/${name}.json`);
      t.equal(answer.status, 200, `${role} /docs/spec/${name}.json`);
      t.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      const view = JSON.parse(answer.body.toString()) as OpenApiDocument;
      const here = listOperations(document).filter((op) => op.roles.includes(role));
      const elsewhere = listOperations(document).filter((op) => !op.roles.includes(role));
      t.same(
        operationKeys(view),
        here.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort(),
        `${role} ${name}: the operations served here`,
      );
      for (const op of listOperations(view)) {
        const servers = (op.operation.servers as { url: string }[] | undefined) ?? view.paths[op.path]!.servers ?? view.servers;
        const target = op.operationId === 'registerClient' ? `http://${system.config.registrationHost}` : '/';
        t.match(servers, [{ url: target }], `${role} ${op.operationId}: tried at ${target}`);
      }
      if (elsewhere.length > 0)
        for (const op of elsewhere)
          t.match(
            view.info.description,
            `\`${op.method.toUpperCase()} ${op.path}\`: the ${op.roles.join(' or ')} role`,
            `${role} ${name}: names ${op.operationId}`,
          );
      else t.notMatch(view.info.description ?? '', /Served by other roles/, `${role} ${name}: nothing served elsewhere`);
    }
  }
  const login = JSON.parse((await send(system.url('login'), '/docs/spec/snapshots.json')).body.toString()) as OpenApiDocument;
  t.same(operationKeys(login), ['POST /resource/loginAction.jsp'], 'the login role shows the login only');
  t.equal((await send(system.url('gateway'), '/docs/spec/mapping.json')).status, 404, 'a spec the role does not serve');
  t.equal((await send(system.url('gateway'), '/docs/spec/health.yaml')).status, 404, 'the page view is JSON only');
});

t.test('a served spec names the ports the roles run on, in one pass, and registration at its configured path and host', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'x',
      version: '1',
      description:
        'The gateway at http://localhost:8080 (port **8080** in the service description), the pool member 127.0.0.1:8081, then [::1]:8100 and port 9999.',
    },
    servers: [{ url: 'http://localhost:8080', 'x-portolan-role': 'gateway' }],
    'x-settings': { hostName: 'localhost:8080' },
    paths: {
      '/register': {
        post: { operationId: 'registerClient', responses: {} },
      },
      '/other': { get: { operationId: 'other', servers: [{ url: 'http://localhost:8081', 'x-portolan-role': 'mapping' }], responses: {} } },
    },
  } as unknown as OpenApiDocument;
  // The gateway and the mapping role trade places: each default is replaced once, not twice.
  const ports = { gateway: 8081, mapping: 8080, device: 9100 };
  const served = servedDocument(document, 'gateway', {
    ports,
    registration: { host: 'localhost:8081', path: '/custom/register', operationPath: '/register' },
  });
  t.equal(
    served.info.description,
    'The gateway at http://localhost:8081 (port **8081**), the pool member 127.0.0.1:8080, then [::1]:9100 and port 9999.',
  );
  t.same((served as Record<string, unknown>)['x-settings'], { hostName: 'localhost:8080' }, "extensions keep the spec's defaults");
  t.same(Object.keys(served.paths), ['/custom/register', '/other'], 'registration at its configured path, in its place');
  t.match(served.paths['/custom/register']!.post, { servers: [{ url: 'http://localhost:8081' }] }, 'at the registration host');
  t.same(served.servers, [{ url: '/', description: 'This gateway role (the one serving this document)' }]);
  t.match(served.paths['/other']!.get, { servers: [{ url: 'http://localhost:8080' }] }, "another role's server at its port");
  t.equal(document.info.description?.toString().includes('8081 (port'), false, 'the shared document is not changed');
  const odd = servedDocument(document, 'gateway', { registration: { host: 'evil/path@x', path: '/register', operationPath: '/register' } });
  t.notOk((odd.paths['/register']!.post as { servers?: unknown }).servers, 'a registration host that is no host[:port] is left out');
  const page = servedDocument(document, 'gateway', { ports }, 'page');
  t.same(Object.keys(page.paths), ['/register'], 'the page view keeps the operations of this role');
  t.match(page.info.description, /### Served by other roles[\s\S]*- `GET \/other`: the mapping role/);
});

t.test('/docs and its assets answer with their types, the strict CSP, caching and gzip', async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ROLE_NAMES) {
    const page = await send(system.url(role), '/docs');
    t.equal(page.status, 200, `${role} /docs`);
    t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    // The gateway's page may also call the registration host (registration's "Try it out").
    const csp = role === 'gateway' ? referencePageCsp([`http://${system.config.registrationHost}`]) : REFERENCE_PAGE_CSP;
    t.equal(page.headers['content-security-policy'], csp, `${role}: the CSP`);
    t.equal(page.headers['x-content-type-options'], 'nosniff');
    const html = page.body.toString();
    t.notMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
    t.notMatch(html, /(src|href)="(https?:)?\/\/(?!127\.0\.0\.1)/, 'nothing from another site');
    for (const { name } of specsOfRole(role)) t.match(html, `/docs/spec/${name}.json`, `${role} /docs offers ${name}`);
  }
  t.match(REFERENCE_PAGE_CSP, /default-src 'self'/);
  t.match(REFERENCE_PAGE_CSP, /connect-src 'self';/, 'the other pages call their own origin only');
  t.notMatch(REFERENCE_PAGE_CSP, /script-src[^;]*(unsafe|\*)/, 'scripts from the origin only, no eval');

  const gateway = system.url('gateway');
  for (const [name, type] of Object.entries(SWAGGER_UI_FILES)) {
    const asset = await send(gateway, `/docs/${name}`);
    t.equal(asset.status, 200, name);
    t.equal(asset.headers['content-type'], type, `${name} type`);
    t.match(asset.headers['cache-control'], /max-age=31536000/, `${name} is cached for good (its URL is versioned)`);
    t.match(asset.headers.etag, /^"[\w-]+"$/, `${name} has a strong ETag`);
  }
  const init = await send(gateway, '/docs/init.js');
  t.equal(init.headers['content-type'], 'text/javascript; charset=utf-8');
  t.match(init.body.toString(), /SwaggerUIBundle\(/);

  const plain = await send(gateway, '/docs/swagger-ui-bundle.js');
  const zipped = await send(gateway, '/docs/swagger-ui-bundle.js', { headers: { 'accept-encoding': 'gzip, br' } });
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.equal(zipped.headers.vary, 'Accept-Encoding');
  t.ok(zipped.body.length < plain.body.length / 2, 'gzipped');
  t.ok(gunzipSync(zipped.body).equals(plain.body), 'the same file once unzipped');
  t.not(zipped.headers.etag, plain.headers.etag, 'each form has its own ETag');
  const refused = await send(gateway, '/docs/swagger-ui-bundle.js', { headers: { 'accept-encoding': 'gzip;q=0' } });
  t.equal(refused.headers['content-encoding'], undefined, 'gzip;q=0 is not gzip');
});

t.test('each page shows the URL of every role (the ports in use) and how to authorize, with no password and no default port', async (t) => {
  let generated = '';
  const { system } = await startTestSystem(t, { announce: (message) => (generated = /: (\S+)\n/.exec(message)?.[1] ?? '') });
  t.ok(generated.length >= 16, 'a fresh system generated an administrative password');
  const defaultPorts = defaultPortMentions(system);
  for (const role of ROLE_NAMES) {
    const html = (await send(system.url(role), '/docs')).body.toString();
    for (const other of ROLE_NAMES) t.match(html, `<code>${system.url(other)}</code>`, `${role}: shows where ${other} runs`);
    t.notMatch(html, defaultPorts, `${role}: names no default port`);
    t.notMatch(html, generated, `${role}: never the password`);
    t.match(html, /How to authorize/, `${role}: says how to authorize`);
  }
  const text = async (role: RoleName) => (await send(system.url(role), '/docs')).body.toString();
  const device = await text('device');
  t.match(device, /<b>basicAuth<\/b> \(HTTP Basic\): user <code>admin<\/code>/, 'device: Basic with the administrative user');
  t.match(device, /PORTOLAN_ADMIN_PASSWORD/, 'device: where the password comes from');
  t.match(device, /<b>vendorAuthToken<\/b>.*POST \/mgmt\/shared\/authn\/login/, 'device: where the token comes from');
  const gateway = await text('gateway');
  t.match(gateway, /<b>bearerToken<\/b> \(Bearer token\): any token/, 'gateway: the bearer token');
  t.match(gateway, /<b>adminBasic<\/b>/, 'gateway: the sessions admin');
  t.match(gateway, `so this page sends it to <code>http://${system.config.registrationHost}</code>`, 'gateway: where registration goes');
  t.match(gateway, /portolan users add --profile registration_check/, 'gateway: how to get a registration user');
  t.match(await text('diagnostics'), /<b>ssoSession<\/b> \(the <code>ssosession<\/code> cookie\)/, 'diagnostics: the session cookie');
  t.notMatch(await text('mapping'), /<b>\w+<\/b> \(/, 'mapping: no scheme (its operations are open)');
  t.match(await text('mapping'), /Operations without a lock need no credentials/);
});

t.test("the gateway's page may send registration to the registration host: CORS for that page only, Host routing unchanged", async (t) => {
  const { system } = await startTestSystem(t);
  const gateway = system.url('gateway');
  const port = new URL(gateway).port;
  const host = system.config.registrationHost;
  const path = system.config.registrationPath;
  const page = `http://127.0.0.1:${port}`;
  const preflight = (origin: string, headers: Record<string, string> = {}) =>
    send(gateway, path, {
      method: 'OPTIONS',
      headers: { host, origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type', ...headers },
    });
  const register = (origin: string | undefined, hostHeader = host) =>
    send(gateway, path, {
      method: 'POST',
      headers: {
        host: hostHeader,
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '27',
        ...(origin ? { origin } : {}),
      },
      body: 'username=nobody&password=no',
    });

  const allowed = await preflight(page);
  t.equal(allowed.status, 204, "the preflight from the gateway's page");
  t.equal(allowed.headers['access-control-allow-origin'], page);
  t.match(allowed.headers['access-control-allow-methods'], /POST/);
  t.match(allowed.headers['access-control-allow-headers'], /content-type/);
  t.equal((await preflight(`http://localhost:${port}`)).status, 204, 'the page loaded at localhost');
  for (const origin of [`http://evil.example:${port}`, 'http://127.0.0.1:1', `https://127.0.0.1:${port}`, 'null']) {
    const refused = await preflight(origin);
    t.not(refused.status, 204, `no preflight answer for ${origin}`);
    t.notOk(refused.headers['access-control-allow-origin'], `${origin}: not allowed`);
  }
  const otherHost = await preflight(page, { host: `127.0.0.1:${port}` });
  t.notOk(otherHost.headers['access-control-allow-origin'], 'a preflight with another Host is no registration preflight');

  const fromPage = await register(page);
  t.equal(fromPage.status, 403, 'registration answered it (no such user on a fresh system)');
  t.match(JSON.parse(fromPage.body.toString()), { error: 'invalid user credentials' }, "in registration's own shape");
  t.equal(fromPage.headers['access-control-allow-origin'], page, 'the page may read the answer');
  const fromElsewhere = await register(`http://evil.example:${port}`);
  t.equal(fromElsewhere.status, 403, 'a registration from another origin is still answered (Host routing unchanged)');
  t.notOk(fromElsewhere.headers['access-control-allow-origin'], 'but another site may not read it');
  const plain = await register(undefined);
  t.equal(plain.status, 403, 'a client with no Origin, as before');
  t.notOk(plain.headers['access-control-allow-origin']);
  const wrongHost = await register(page, `127.0.0.1:${port}`);
  t.equal(wrongHost.status, 404, 'with another Host it is no registration: the pool answers, as before');
  t.notOk(wrongHost.headers['access-control-allow-origin']);

  const off = await startTestSystem(t, { config: { referencePages: false } });
  const offPort = new URL(off.system.url('gateway')).port;
  const offPreflight = await send(off.system.url('gateway'), path, {
    method: 'OPTIONS',
    headers: { host: off.system.config.registrationHost, origin: `http://127.0.0.1:${offPort}`, 'access-control-request-method': 'POST' },
  });
  t.notOk(offPreflight.headers['access-control-allow-origin'], 'without reference pages there is no page to allow');
});

t.test('HEAD answers the headers of GET, and a conditional GET gives 304', async (t) => {
  const { system } = await startTestSystem(t);
  const base = system.url('device');
  for (const target of ['/docs', '/docs/swagger-ui.css', '/openapi/device-config.yaml', '/openapi/health.json']) {
    const get = await send(base, target);
    const head = await send(base, target, { method: 'HEAD' });
    t.equal(head.status, 200, `HEAD ${target}`);
    t.equal(head.body.length, 0, 'no body');
    t.equal(head.headers['content-length'], String(get.body.length), 'the length of the GET body');
    t.equal(head.headers.etag, get.headers.etag);
    const again = await send(base, target, { headers: { 'if-none-match': get.headers.etag! } });
    t.equal(again.status, 304, `conditional GET ${target}`);
    t.equal(again.body.length, 0);
    t.equal(again.headers.etag, get.headers.etag);
    const weak = await send(base, target, { headers: { 'if-none-match': `"other", W/${get.headers.etag}` } });
    t.equal(weak.status, 304, 'a list with the weak form of the ETag matches');
    const stale = await send(base, target, { headers: { 'if-none-match': '"stale"' } });
    t.equal(stale.status, 200, 'another ETag gets the answer');
  }
  const slash = await send(base, '/docs/');
  t.equal(slash.status, 301, '/docs/ redirects');
  t.equal(slash.headers.location, '/docs');
  const post = await send(base, '/docs', { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
  t.equal(post.headers.connection, 'keep-alive', 'no body: the connection stays');
  const upload = await send(base, '/docs', {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(10 ** 9) },
  });
  t.equal(upload.status, 405, 'a 1 GB body announced, none sent: answered at once');
  t.equal(upload.headers.connection, 'close', 'the unread body is not drained: the connection closes');
});

t.test('no path reaches a file outside the allow-listed Swagger UI files', async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ['gateway', 'mapping'] as const) {
    for (const target of [
      '/docs/../../package.json',
      '/docs/..%2f..%2fpackage.json',
      '/docs/%2e%2e/%2e%2e/package.json',
      '/docs/%2E%2E%2F%2E%2E%2Fpackage.json',
      '/docs/..%5c..%5cpackage.json',
      '/docs/package.json',
      '/docs/swagger-initializer.js',
      '/docs/absolute-path.js',
      '/docs/swagger-ui.css/../../../package.json',
      '/docs//etc/passwd',
      '/docs/constructor',
      '/docs/__proto__',
      '/openapi/../package.json',
      '/openapi/..%2fpackage.json',
    ]) {
      const answer = await send(system.url(role), target);
      t.equal(answer.status, 404, `${role} ${target}`);
      t.notMatch(answer.body.toString(), /"name"\s*:\s*"portolan|"swagger-ui-dist"|root:/, 'no file content');
    }
  }
});

t.test(
  'with PORTOLAN_REFERENCE_PAGES false, /docs and /openapi/ are paths like any other: the gateway passes them to its pool',
  async (t) => {
    const { lines, logger } = captureLogs();
    const { system } = await startTestSystem(t, { config: { referencePages: false }, logger });
    // What the mapping role (the test system's pool member) answered, from its request lines.
    const mappingAnswers = () =>
      lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.msg === 'request' && r.role === 'mapping' && r.operationId !== 'getHealth');
    for (const target of ['/docs', '/docs/swagger-ui.css', '/openapi/mapping.json']) {
      const direct = await send(system.url('mapping'), target);
      t.equal(direct.status, 404, `the mapping role has no ${target} of its own`);
      t.notOk(direct.headers['content-security-policy'], 'not a reference page');
      const before = mappingAnswers().length;
      const viaGateway = await send(system.url('gateway'), target);
      t.equal(viaGateway.status, 404, `${target} on the gateway`);
      t.equal(viaGateway.headers['content-type'], direct.headers['content-type'], "in the pool member's shape");
      t.same(JSON.parse(viaGateway.body.toString()), JSON.parse(direct.body.toString()), "the pool member's answer");
      t.match(mappingAnswers().slice(before), [{ status: 404 }], 'answered by the pool member');
    }
    const on = await startTestSystem(t);
    const page = await send(on.system.url('gateway'), '/docs');
    t.equal(page.status, 200, 'by default the gateway serves its own page');
    t.match(page.body.toString(), /Portolan gateway role/);
  },
);

t.test('each reference-page request is logged in one line, at debug', async (t) => {
  const { lines, logger } = captureLogs();
  const { system } = await startTestSystem(t, { logger });
  await send(system.url('mapping'), '/docs');
  await send(system.url('mapping'), '/docs/swagger-ui.css?v=1');
  await send(system.url('gateway'), '/openapi/nothing.json');
  const logged = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.msg === 'request' && typeof r.page === 'string');
  t.match(logged, [
    { level: 20, role: 'mapping', method: 'GET', page: '/docs', status: 200, requestId: String, ms: Number },
    { level: 20, role: 'mapping', method: 'GET', page: '/docs/swagger-ui.css', status: 200 },
    { level: 20, role: 'gateway', method: 'GET', page: '/openapi/nothing.json', status: 404 },
  ]);
  t.equal(logged.length, 3, 'one line each');
});
