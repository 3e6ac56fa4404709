import t from 'tap';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { ROLE_NAMES } from '../lib/roles.ts';
import type { OpenApiDocument } from '../lib/spec-catalog.ts';
import { startTestSystem } from '../app/test-system.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { REFERENCE_PAGE_CSP } from './reference-pages.ts';
import { SWAGGER_UI_FILES } from './swagger-ui-assets.ts';
import { specsOfRole, withoutServers } from './reference-test-helpers.ts';

type Answer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** One request as written: node:http sends the target unchanged (fetch would resolve `..` itself). */
function send(base: string, target: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
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
    req.end();
  });
}

t.test('every role serves each of its specs as YAML and JSON, equal to the file but for servers pointing at the role', async (t) => {
  const { system } = await startTestSystem(t);
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
      t.same(withoutServers(fromJson), withoutServers(document), `${role} ${name}: the spec file, servers aside`);
      // Try it out calls the role that served the page: every servers list naming this role is now the relative '/'.
      const lists = [document.servers, ...Object.values(document.paths).map((item) => item.servers)];
      const servedLists = [fromJson.servers, ...Object.values(fromJson.paths).map((item) => item.servers)];
      lists.forEach((list, i) => {
        if (list?.some((s) => s['x-portolan-role'] === role))
          t.match(servedLists[i], [{ url: '/' }], `${role} ${name}: servers of this role replaced`);
        else t.same(servedLists[i], list, `${role} ${name}: servers of other roles left as written`);
      });
    }
    const notServed = await send(system.url(role), '/openapi/not-a-spec.json');
    t.equal(notServed.status, 404, `${role}: an unknown spec is 404`);
  }
  const mappingOnGateway = await send(system.url('gateway'), '/openapi/mapping.json');
  t.equal(mappingOnGateway.status, 404, 'a spec the role does not serve is 404 (the gateway does not pass /openapi/ to its pool)');
});

t.test('/docs and its assets answer with their types, the strict CSP, caching and gzip', async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ROLE_NAMES) {
    const page = await send(system.url(role), '/docs');
    t.equal(page.status, 200, `${role} /docs`);
    t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    t.equal(page.headers['content-security-policy'], REFERENCE_PAGE_CSP);
    t.equal(page.headers['x-content-type-options'], 'nosniff');
    const html = page.body.toString();
    t.notMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
    t.notMatch(html, /(src|href)="(https?:)?\/\/(?!127\.0\.0\.1)/, 'nothing from another site');
    for (const { name } of specsOfRole(role)) t.match(html, `/openapi/${name}.json`, `${role} /docs offers ${name}`);
  }
  t.match(REFERENCE_PAGE_CSP, /default-src 'self'/);
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
