import t from 'tap';
import { pino } from 'pino';
import { REDACTED_PATHS } from '../lib/logger.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startTestSystem } from '../app/test-system.ts';
import { captureLogs } from '../lib/test-logger.ts';

const SECRET_TOKEN = 'tok-9f2c41d7e0b5a8';
const PASSWORD = 'Hunter2-but-longer';

t.test('request logs carry id, role, operation, status and duration, and never a credential', async (t) => {
  const { lines, logger } = captureLogs();
  const { system } = await startTestSystem(t, { logger });
  const auth = { authorization: `Bearer ${SECRET_TOKEN}` };
  await fetch(`${system.url('mapping')}/api/charts`, { headers: auth });
  await fetch(`${system.url('mapping')}/api/charts`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: `{"name": "${PASSWORD}", "password": "${PASSWORD}"`,
  });
  await fetch(`${system.url('gateway')}/vendor-oauth2/v1/client-register`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'localhost' },
    body: `username=alice&password=${PASSWORD}`,
  });
  await fetch(`${system.url('device')}/mgmt/tm/traffic/rule`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'r', apiAnonymous: 'when HTTP_REQUEST {}' }),
  });
  await fetch(`${system.url('central')}/mgmt/shared/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-vendor-auth-token': SECRET_TOKEN },
    body: JSON.stringify({ username: 'admin', password: PASSWORD, loginProviderName: 'tmos' }),
  });
  // The gateway's health monitor polls the mapping role meanwhile, and the gateway logs in to the device
  // once at its start (registration's management session); neither is under test here.
  const requests = lines
    .map((l) => JSON.parse(l))
    .filter((r) => r.msg === 'request' && r.operationId !== 'getHealth' && r.operationId !== 'loginDeviceUser');
  // The registration-shaped request lacks the configured Host, so the gateway passes it to the pool:
  // one line from the gateway, one from the mapping role.
  t.equal(requests.length, 6, 'one line per request and role');
  t.match(requests[0], { role: 'mapping', operationId: 'listCharts', status: 200, method: 'GET', requestId: String, ms: Number });
  t.match(requests[1], { role: 'mapping', operationId: 'createChart', status: 400 });
  const all = lines.join('\n');
  t.notMatch(all, SECRET_TOKEN, 'no bearer token in the log');
  t.notMatch(all, PASSWORD, 'no password in the log');
});

t.test('the logger redacts credentials wherever a record carries them', async (t) => {
  const { lines, logger } = captureLogs();
  logger.info(
    {
      password: PASSWORD,
      user: { password: PASSWORD, client_secret: 'cs-123456' },
      req: { headers: { authorization: `Bearer ${SECRET_TOKEN}`, cookie: `ssosession=${SECRET_TOKEN}` } },
      token: SECRET_TOKEN,
    },
    'with secrets',
  );
  t.notMatch(lines.join(''), new RegExp(`${PASSWORD}|${SECRET_TOKEN}|cs-123456`));
  t.match(lines.join(''), /\[redacted\]/);
  t.ok(REDACTED_PATHS.length > 10);
});

t.test('every role serves Prometheus metrics of its requests at /metrics', async (t) => {
  const { system } = await startTestSystem(t, { logger: pino({ level: 'silent' }) });
  await fetch(`${system.url('mapping')}/api/vessels`);
  await fetch(`${system.url('mapping')}/api/vessels/nope`);
  for (const role of ROLE_NAMES) {
    const response = await fetch(`${system.url(role)}/metrics`);
    t.equal(response.status, 200, `${role} /metrics`);
    t.match(response.headers.get('content-type'), /text\/plain/);
    const text = await response.text();
    t.match(text, 'portolan_http_requests_total{role="mapping",operation="listVessels",status="200"} 1');
    t.match(text, 'portolan_http_requests_total{role="mapping",operation="getVessel",status="404"} 1');
    t.match(text, /portolan_http_request_duration_seconds_bucket\{le="0.005",role="mapping",operation="listVessels"\}/);
  }
});

t.test('a scrape and the reference pages are not counted in the request metrics, and a scrape is not logged', async (t) => {
  const { lines, logger } = captureLogs();
  const { system } = await startTestSystem(t, { logger });
  const base = system.url('mapping');
  await (await fetch(`${base}/docs`)).arrayBuffer();
  await (await fetch(`${base}/metrics`)).text();
  const text = await (await fetch(`${base}/metrics`)).text();
  t.notMatch(text, /portolan_http_requests_total\{role="mapping",operation="none"/, 'neither the page nor the first scrape counted');
  // The gateway's health monitor probes the mapping role meanwhile: its lines are not the test's.
  const logged = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.msg === 'request' && r.role === 'mapping' && r.operationId !== 'getHealth');
  t.match(logged, [{ level: 20, page: '/docs', status: 200 }], 'the page in one line at debug; the scrapes in none');
  t.equal(logged.length, 1);
});

t.test('graceful stop: /health turns 503 first, in-flight requests finish, then listeners close', async (t) => {
  let release: () => void = () => {};
  const slow = new Promise<void>((resolve) => (release = resolve));
  let entered: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (entered = resolve));
  // The drain runs on the test's clock: the order below is the test's, not the machine's speed.
  const { system, clock } = await startTestSystem(t, {
    fakeTimers: true,
    handlers: {
      topology: {
        loginManagementUser: async () => {
          entered();
          await slow;
          return { status: 401, body: { code: 401, message: 'Authentication failed.', kind: ':resterrorresponse' } };
        },
      },
    },
  });
  const healthUrl = `${system.url('mapping')}/health`;
  t.equal((await fetch(healthUrl)).status, 200, 'healthy before');
  const inFlight = fetch(`${system.url('central')}/mgmt/shared/authn/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'a', password: 'b', loginProviderName: 'tmos' }),
  });
  await arrived; // the request is in its handler
  const stopping = system.stop({ drainMs: 300, timeoutMs: 2000 });
  const during = await fetch(healthUrl);
  t.equal(during.status, 503, '/health answers 503 while draining');
  t.match(await during.json(), { status: 'unhealthy', services: 'unavailable' });
  await clock.advanceAsync(300); // the drain ends: the listeners close while the request is still in its handler
  release();
  t.equal((await inFlight).status, 401, 'the in-flight request finished with its own answer');
  await stopping;
  await t.rejects(fetch(healthUrl), 'the listener is closed');
});
