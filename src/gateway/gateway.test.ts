// The gateway end to end over real sockets: the limiter (E) in front of everything, registration (D)
// matched by method, path and Host, its own operations, and the pool behind it.
import { request as httpRequest } from 'node:http';
import t from 'tap';
import { createClient } from '../../generated/rate-limit/client/index.ts';
import * as rateLimitSdk from '../../generated/rate-limit/sdk.gen.ts';
import { createSpecValidator } from '../lib/spec-ajv.ts';
import { loadSpec } from '../lib/spec-catalog.ts';
import { startTestSystem } from '../app/test-system.ts';
import { runLoad } from '../lib/load-generator.ts';
import { postLargeJson, SENT_FIRST } from '../traffic/test-clients.ts';

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One request with exactly these headers (fetch would add its own Host and lose the control we need). */
function send(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string; timeoutMs?: number },
): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname, port, method: options.method ?? 'GET', path: options.path, headers: options.headers ?? {}, timeout: options.timeoutMs },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.end(options.body);
  });
}

const rateLimitSpec = createSpecValidator(loadSpec('rate-limit'));
const isRateLimitStatus = rateLimitSpec.at('/components/schemas/RateLimitStatus');
const isGatewayError = rateLimitSpec.at('/components/schemas/GatewayError');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

type PoolStatus = { membersUp: number; members: { state: string }[] };

/**
 * The gateway's pool status once `check` holds: the monitor probes every 50 ms here, so this asks
 * until it does (the bound, 400 asks, only keeps a broken test from hanging).
 */
async function poolOnce(gateway: string, check: (status: PoolStatus) => boolean): Promise<PoolStatus | undefined> {
  for (let i = 0; i < 400; i++) {
    const status = JSON.parse((await send(gateway, { path: '/gateway/pool' })).body) as PoolStatus;
    if (check(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return undefined;
}

t.test('requests the gateway does not answer itself reach the pool unchanged', async (t) => {
  const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  const direct = await send(system.url('mapping'), { path: '/api/vessels' });
  const proxied = await send(system.url('gateway'), { path: '/api/vessels' });
  t.equal(proxied.status, 200);
  t.equal(proxied.body, direct.body, 'the body of the mapping role, byte for byte');
  t.equal(proxied.headers['content-type'], direct.headers['content-type']);
  const missing = await send(system.url('gateway'), { path: '/api/charts/no-such-chart' });
  t.equal(missing.status, 404, "the member's own 404 passes through");
  t.match(JSON.parse(missing.body), { status: 'error' }, 'in the mapping API shape, not the gateway one');
});

t.test('the limiter: 429 at request 1001, still at +299 s, allowed again after +300 s; the status call counts nothing', async (t) => {
  const { system, clock } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  const gateway = system.url('gateway');
  const token = 'e2e-limit-token';
  const result = await runLoad({
    targets: [gateway],
    requests: 1000,
    concurrency: 32,
    request: () => ({ path: '/api/vessels', headers: bearer(token) }),
  });
  t.same(Object.fromEntries(result.byStatus), { 200: 1000 }, 'the first 1000 requests pass');

  const client = createClient({ baseUrl: gateway });
  const status = await rateLimitSdk.getRateLimitStatus({ client, headers: bearer(token) });
  t.same(status.data, { 'x-rate-limit-limit': 1000, 'x-rate-limit-remaining': 0, 'x-rate-limit-reset': 300 });

  const limited = await send(gateway, { path: '/api/vessels', headers: bearer(token) });
  t.equal(limited.status, 429, 'request 1001 is limited');
  t.equal(limited.headers['retry-after'], '300');
  const body = JSON.parse(limited.body);
  t.ok(isRateLimitStatus(body), 'the body is the rate-limit status');
  t.same(body, { 'x-rate-limit-limit': 1000, 'x-rate-limit-remaining': 0, 'x-rate-limit-reset': 300 });

  clock.advance(299_000);
  const later = await send(gateway, { path: '/api/vessels', headers: bearer(token) });
  t.equal(later.status, 429, 'still limited at +299 s: the window is never extended');
  t.equal(later.headers['retry-after'], '1');
  t.equal(JSON.parse(later.body)['x-rate-limit-reset'], 1, 'reset is the remaining lifetime');
  clock.advance(1000);
  const again = await send(gateway, { path: '/api/vessels', headers: bearer(token) });
  t.equal(again.status, 200, 'allowed again at +300 s');
  const fresh = await rateLimitSdk.getRateLimitStatus({ client, headers: bearer(token) });
  t.same(
    fresh.data,
    { 'x-rate-limit-limit': 1000, 'x-rate-limit-remaining': 999, 'x-rate-limit-reset': 300 },
    'a new window of one request',
  );
  for (let i = 0; i < 5; i++) await rateLimitSdk.getRateLimitStatus({ client, headers: bearer(token) });
  const unchanged = await rateLimitSdk.getRateLimitStatus({ client, headers: bearer(token) });
  t.equal(unchanged.data?.['x-rate-limit-remaining'], 999, 'status calls are never counted');

  const none = await rateLimitSdk.getRateLimitStatus({ client, headers: bearer('never-seen') });
  t.same(
    none.data,
    { 'x-rate-limit-limit': 1000, 'x-rate-limit-remaining': 1000, 'x-rate-limit-reset': 300 },
    'count 0: limit, limit, window',
  );
});

t.test('requests without a bearer token are never limited, and another method on the status path is counted', async (t) => {
  const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50, rateLimitLimit: 2 } });
  const gateway = system.url('gateway');
  for (let i = 0; i < 5; i++)
    t.equal((await send(gateway, { path: '/api/vessels', headers: { authorization: 'Basic YTpi' } })).status, 200);
  // Designed (specs/rate-limit.yaml, MalformedBearer): `Bearer` without a token is refused, not passed on uncounted.
  for (let i = 0; i < 2; i++)
    t.equal((await send(gateway, { path: '/api/vessels', headers: { authorization: 'Bearer' } })).status, 400, 'Bearer without a token');
  const token = bearer('post-status');
  t.equal(
    (await send(gateway, { method: 'POST', path: '/rate_limit_status', headers: token })).status,
    404,
    'POST /rate_limit_status goes to the pool (which has no such path)',
  );
  t.equal((await send(gateway, { method: 'POST', path: '/rate_limit_status', headers: token })).status, 404);
  const third = await send(gateway, { method: 'POST', path: '/rate_limit_status', headers: token });
  t.equal(third.status, 429, 'and it was counted');
});

t.test('registration is matched by POST, the configured path and the configured Host; anything else goes to the pool', async (t) => {
  const { system } = await startTestSystem(t, {
    config: { monitorIntervalMs: 50, registrationHost: 'register.example.com', registrationMaxBodyBytes: 64 },
  });
  const gateway = system.url('gateway');
  const path = '/vendor-oauth2/v1/client-register';
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  const wrongHost = await send(gateway, {
    method: 'POST',
    path,
    headers: { ...form, host: 'other.example.com' },
    body: 'username=a&password=b',
  });
  t.equal(wrongHost.status, 404, 'wrong Host: passed to the pool');
  t.match(JSON.parse(wrongHost.body), { status: 'error' }, 'answered by the mapping role');
  const wrongMethod = await send(gateway, { method: 'GET', path, headers: { host: 'register.example.com' } });
  t.equal(wrongMethod.status, 404, 'wrong method: passed to the pool');
  t.match(JSON.parse(wrongMethod.body), { status: 'error' });

  const missingField = await send(gateway, {
    method: 'POST',
    path,
    headers: { ...form, host: 'REGISTER.example.com' },
    body: 'username=alice',
  });
  t.equal(missingField.status, 400, 'a registration request (Host compared without case) with a missing field');
  t.equal(missingField.headers.connection, 'close');
  t.equal(missingField.headers['cache-control'], 'no-store');
  t.equal(missingField.headers.server, undefined, 'no Server header');
  t.ok(isGatewayError(JSON.parse(missingField.body)), '{error, error-message}');

  const chunked = await send(gateway, {
    method: 'POST',
    path,
    headers: { ...form, host: 'register.example.com', 'transfer-encoding': 'chunked' },
    body: 'username=alice&password=secret',
  });
  t.equal(chunked.status, 400, 'without Content-Length the body is not collected: an empty form');
  t.equal(chunked.headers.connection, 'close');

  const big = `username=alice&password=${'x'.repeat(100)}`;
  const tooLarge = await send(gateway, {
    method: 'POST',
    path,
    headers: { ...form, host: 'register.example.com', 'content-length': String(big.length) },
    body: big,
  });
  t.equal(tooLarge.status, 413, 'a body over the registration cap by its Content-Length');
  t.equal(tooLarge.headers.connection, 'close');
  t.ok(isGatewayError(JSON.parse(tooLarge.body)));
});

t.test('with another registration path configured, the spec path is not a way around the Host rule', async (t) => {
  const { system } = await startTestSystem(t, {
    config: { monitorIntervalMs: 50, registrationPath: '/register', registrationHost: 'register.example.com' },
  });
  const gateway = system.url('gateway');
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const specPath = await send(gateway, {
    method: 'POST',
    path: '/vendor-oauth2/v1/client-register',
    headers: { ...form, host: 'other.example.com' },
    body: 'username=alice',
  });
  t.equal(specPath.status, 404, 'the spec path with another Host goes to the pool');
  t.match(JSON.parse(specPath.body), { status: 'error' }, 'answered by the mapping role');
  const configured = await send(gateway, {
    method: 'POST',
    path: '/register',
    headers: { ...form, host: 'register.example.com' },
    body: 'username=alice',
  });
  t.equal(configured.status, 400, 'the configured path with the configured Host is a registration request');
  t.equal(configured.headers.connection, 'close');
});

t.test('the pool: status endpoint, /health, and 502 when no member is up', async (t) => {
  const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  const gateway = system.url('gateway');
  t.ok(await poolOnce(gateway, (status) => status.members[0]?.state === 'up'), 'the monitor has probed the member');
  const pool = await send(gateway, { path: '/gateway/pool' });
  t.equal(pool.status, 200);
  const status = JSON.parse(pool.body);
  t.match(status, {
    name: 'mapping',
    membersUp: 1,
    members: [{ address: `127.0.0.1:${new URL(system.url('mapping')).port}`, state: 'up', lastStatus: 200 }],
  });
  t.equal((await send(gateway, { path: '/health' })).status, 200, 'the gateway is healthy with its member up');

  const dead = await startTestSystem(t, { config: { monitorIntervalMs: 50, poolMembers: [{ host: '127.0.0.1', port: 9 }] } });
  t.ok(await poolOnce(dead.system.url('gateway'), (status) => status.membersUp === 0), 'the monitor has marked the member down');
  const noMember = await send(dead.system.url('gateway'), { path: '/api/vessels' });
  t.equal(noMember.status, 502);
  t.ok(isGatewayError(JSON.parse(noMember.body)), 'in the gateway error shape');
  const health = await send(dead.system.url('gateway'), { path: '/health' });
  t.equal(health.status, 503, 'the gateway is unhealthy with no member up');
  t.match(JSON.parse(health.body), { status: 'unhealthy', services: 'unavailable' });
});

t.test(
  "a 1.1 MB JSON body sent all at once through the gateway gets the mapping role's 413, not a wait for the client's timeout",
  async (t) => {
    const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
    const body = JSON.stringify({ note: 'x'.repeat(1_100_000) });
    const tries: { status: number; error?: string }[] = [];
    for (let i = 0; i < 5; i++) {
      // Bounded by the client's own timeout (5 s), the wait the issue saw: then it counts as no answer.
      const outcome = await send(system.url('gateway'), {
        method: 'POST',
        path: '/api/charts',
        headers: { 'content-type': 'application/json' },
        body,
        timeoutMs: 5000,
      }).then(
        (answer) => ({ status: answer.status }),
        (error: Error) => ({ status: 0, error: error.message }),
      );
      tries.push(outcome);
    }
    t.same(tries, Array(5).fill({ status: 413 }), 'five of five tries answered 413');
  },
);

t.test("a 1.1 MB JSON body through the gateway: the mapping role's 413 reaches the client at once, then a clean close", async (t) => {
  const { system, config } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  const size = 1_100_000;
  t.ok(size > config.bodyLimitBytes, "over the mapping role's body limit");
  const outcome = await postLargeJson(Number(new URL(system.url('gateway')).port), '/api/charts', size, 'after answer').closed;
  t.ok(outcome.answeredBeforeBodySent, `answered while the client held all but ${SENT_FIRST} bytes of its body`);
  t.equal(outcome.status, 413);
  t.match(JSON.parse(outcome.body ?? '{}'), { status: 'error' }, "the mapping role's answer, in its shape");
  t.equal(outcome.headers?.connection, 'close');
  t.same(outcome.errors, [], 'no reset: the client sent its whole body, then the gateway closed');
  t.equal((await send(system.url('gateway'), { path: '/api/vessels' })).status, 200, 'the gateway keeps serving');
});
