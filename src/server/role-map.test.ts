import t from 'tap';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startTestSystem } from '../app/test-system.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { planMocks } from '../../mocks/prism-plan.ts';
import { startMockFront } from '../../mocks/prism-front.ts';
import type { InterfaceName } from '../lib/spec-catalog.ts';
import { specsOfRole } from './reference-test-helpers.ts';
import { isRoleMapTarget, localAddressHost, ROLE_MAP_PATH, type RoleMap } from './role-map.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type Answer = { status: number; headers: IncomingHttpHeaders; body: string };

/** One request with the headers as given (a Host of the test's choosing included), to `base`'s address. */
function send(base: string, options: { method?: string; headers?: Record<string, string>; path?: string } = {}): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname.replace(/^\[|\]$/g, ''),
        port,
        path: options.path ?? ROLE_MAP_PATH,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

t.test('localAddressHost puts IPv6 in brackets, unwraps IPv4-mapped addresses, escapes a zone', async (t) => {
  t.equal(localAddressHost('127.0.0.1'), '127.0.0.1');
  t.equal(localAddressHost('::1'), '[::1]');
  t.equal(localAddressHost('::ffff:127.0.0.1'), '127.0.0.1');
  t.equal(localAddressHost('fe80::1%eth0'), '[fe80::1%25eth0]');
  t.equal(localAddressHost(undefined), '127.0.0.1', 'a request made in-process');
});

t.test('every role of the reference system answers the same role map, at the address the request came in on', async (t) => {
  const { system } = await startTestSystem(t);
  const expected: RoleMap = {
    service: 'portolan',
    version: VERSION,
    kind: 'reference',
    registrationHost: system.config.registrationHost,
    roles: ROLE_NAMES.map((role) => ({
      role,
      url: system.url(role),
      docs: `${system.url(role)}/docs`,
      interfaces: specsOfRole(role).map((s) => s.name),
    })),
  };
  t.match(system.config.registrationHost, /^localhost:\d+$/, 'the registration host derived from the gateway port');
  t.not(system.config.registrationHost, 'localhost:0', 'with the port the gateway got');
  for (const role of ROLE_NAMES) {
    const answer = await send(system.url(role));
    t.equal(answer.status, 200, `${role} answers the role map`);
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    t.equal(answer.headers['cache-control'], 'no-store', 'never cached: it says what runs now');
    t.same(JSON.parse(answer.body), expected, `${role}: every role, in order, with its URL, page and interfaces`);
  }
  const withQuery = await send(system.url('device'), { path: `${ROLE_MAP_PATH}?x=1` });
  t.equal(withQuery.status, 200, 'a query string does not matter');
  const below = await send(system.url('device'), { path: `${ROLE_MAP_PATH}/more` });
  t.equal(below.status, 404, 'a path below it is no role map');
});

t.test('the role map never repeats the Host header', async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ['gateway', 'diagnostics'] as const) {
    const answer = await send(system.url(role), { headers: { host: 'evil.example:6666' } });
    t.equal(answer.status, 200, `${role}: answered whatever the Host`);
    t.notMatch(answer.body, /evil|6666/, `${role}: the hostile Host is nowhere in it`);
    const map = JSON.parse(answer.body) as RoleMap;
    t.same(
      map.roles.map((r) => r.url),
      ROLE_NAMES.map((r) => system.url(r)),
      'the URLs are at the address the connection came in on',
    );
  }
});

t.test('HEAD gives the headers of GET and no body; other methods are 405 in the role error shape', async (t) => {
  const { system } = await startTestSystem(t);
  const base = system.url('central');
  const get = await send(base);
  const head = await send(base, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.body, '', 'no body');
  t.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)), 'the length of the GET body');
  t.equal(head.headers['content-type'], get.headers['content-type']);
  // The gateway's own errors are {error, error-message} (it passes unknown methods on to its pool).
  const gateway = await send(system.url('gateway'), { method: 'POST' });
  t.equal(gateway.status, 405, 'gateway: POST is refused');
  t.equal(gateway.headers.allow, 'GET, HEAD');
  t.match(JSON.parse(gateway.body), { error: String, 'error-message': /not allowed/ }, "in the gateway's own shape");
  const mapping = await send(system.url('mapping'), { method: 'PUT' });
  const own = await send(system.url('mapping'), { method: 'DELETE', path: '/api/charts' });
  t.equal(own.status, 405, "the mapping role's own 405");
  t.equal(mapping.status, 405, 'mapping: PUT is refused');
  t.equal(mapping.headers.allow, 'GET, HEAD');
  t.same(Object.keys(JSON.parse(mapping.body)).sort(), Object.keys(JSON.parse(own.body)).sort(), "in the mapping role's 405 shape");
});

t.test('the map is served with the reference pages off (docs null), and the gateway never passes it to its pool', async (t) => {
  const { lines, logger } = captureLogs();
  const { system } = await startTestSystem(t, { config: { referencePages: false }, logger });
  const before = lines.length;
  const answer = await send(system.url('gateway'));
  const post = await send(system.url('gateway'), { method: 'POST' });
  t.equal(answer.status, 200);
  const map = JSON.parse(answer.body) as RoleMap;
  t.same(
    map.roles.map((r) => r.docs),
    ROLE_NAMES.map(() => null),
    'no role has a page',
  );
  t.equal(post.status, 405, 'refused by the gateway itself');
  const seen = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(
    seen.filter((r) => r.role === 'mapping' && r.msg === 'request'),
    [],
    'the pool member saw no request',
  );
});

t.test('on IPv6 the URLs have the address in brackets', async (t) => {
  const { system } = await startTestSystem(t, { config: { host: '::1' } });
  const answer = await send(system.url('mapping'));
  const map = JSON.parse(answer.body) as RoleMap;
  t.match(map.roles[0]!.url, /^http:\/\/\[::1\]:\d+$/);
  t.same(
    map.roles.map((r) => r.url),
    ROLE_NAMES.map((r) => system.url(r)),
  );
});

t.test('every role of a mock answers the mock role map (kind prism-mock), which lists the roles of its own mock only', async (t) => {
  const plan = planMocks(['mapping', 'device-config']);
  const prism = new Map<InterfaceName, number>();
  const fronts = await Promise.all(plan.roles.map((role) => startMockFront(role, prism, '127.0.0.1', 0)));
  t.teardown(() => Promise.all(fronts.map((f) => f.close())));
  // Another mock in the same process: its roles are not this one's.
  const other = await startMockFront(planMocks(['topology']).roles[0]!, new Map(), '127.0.0.1', 0);
  t.teardown(() => other.close());

  const expected: RoleMap = {
    service: 'portolan',
    version: VERSION,
    kind: 'prism-mock',
    registrationHost: null,
    roles: plan.roles.map((role, i) => ({
      role: role.role,
      url: `http://127.0.0.1:${fronts[i]!.port}`,
      docs: null,
      interfaces: role.interfaces,
    })),
  };
  t.same(
    plan.roles.map((r) => r.role),
    ['mapping', 'device'],
    'the roles those specs need',
  );
  for (const front of fronts) {
    const answer = await send(`http://127.0.0.1:${front.port}`, { headers: { host: 'evil.example' } });
    t.equal(answer.status, 200);
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    t.same(JSON.parse(answer.body), expected);
    t.notMatch(answer.body, /evil/, 'no Host echo');
  }
  const head = await send(`http://127.0.0.1:${fronts[0]!.port}`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.body, '');
  const post = await send(`http://127.0.0.1:${fronts[0]!.port}`, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
  t.match(JSON.parse(post.body), { type: /NO_METHOD_MATCHED_ERROR$/, status: 405 }, "in Prism's problem shape");

  await fronts[1]!.close();
  const after = JSON.parse((await send(`http://127.0.0.1:${fronts[0]!.port}`)).body) as RoleMap;
  t.same(
    after.roles.map((r) => r.role),
    ['mapping'],
    'a closed role leaves the map',
  );
});

t.test('isRoleMapTarget: the path, with or without a query; nothing that only starts like it', async (t) => {
  t.ok(isRoleMapTarget('/.well-known/portolan'));
  t.ok(isRoleMapTarget('/.well-known/portolan?x=1'));
  t.notOk(isRoleMapTarget('/.well-known/portolanx'));
  t.notOk(isRoleMapTarget('/.well-known/portolan/roles'));
  t.notOk(isRoleMapTarget('/api/charts'));
});
