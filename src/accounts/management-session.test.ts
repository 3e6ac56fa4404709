import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeClock } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { createManagementSession, type SdkResult } from './management-session.ts';

/**
 * A device's token endpoints and one protected path, counting what it is asked. Tokens live `timeout`
 * seconds of the fake clock; `forget()` drops every token (a restart on a fresh store). `rotate`: an exchange
 * uses its refresh token up and answers the next one (as Portolan's device does; the real one does not).
 */
async function startFakeDevice(t: TapTest, clock: { nowMs(): number }, options: { rotate?: boolean; accessSeconds?: number } = {}) {
  const accessSeconds = options.accessSeconds ?? 1200;
  const counts = { login: 0, exchange: 0, calls: 0, refused: 0 };
  const tokens = new Map<string, { kind: 'access' | 'refresh'; expiresMs: number }>();
  let next = 0;
  let password = 'right';
  const issue = (kind: 'access' | 'refresh', timeout: number) => {
    const token = `${kind}-${++next}`;
    tokens.set(token, { kind, expiresMs: clock.nowMs() + timeout * 1000 });
    return { token, timeout };
  };
  const valid = (token: string | undefined, kind: 'access' | 'refresh') => {
    const held = token === undefined ? undefined : tokens.get(token);
    return held?.kind === kind && held.expiresMs > clock.nowMs();
  };
  const bodyOf = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return JSON.parse(text || '{}') as Record<string, unknown>;
  };
  const server = createServer(async (req, res) => {
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const refused = () => answer(401, { code: 401, message: 'Authentication failed.', errorStack: [], apiError: 1 });
    if (req.url === '/mgmt/shared/authn/login') {
      counts.login++;
      const body = await bodyOf(req);
      if (body.password !== password) return refused();
      return answer(200, { token: issue('access', accessSeconds), refreshToken: issue('refresh', 36_000) });
    }
    if (req.url === '/mgmt/shared/authn/exchange') {
      counts.exchange++;
      const body = (await bodyOf(req)) as { refreshToken?: { token?: string } };
      const used = body.refreshToken?.token;
      if (!valid(used, 'refresh')) return refused();
      if (!options.rotate) return answer(200, { token: issue('access', accessSeconds) });
      tokens.delete(used!);
      return answer(200, { token: issue('access', accessSeconds), refreshToken: issue('refresh', 36_000) });
    }
    counts.calls++;
    if (!valid(req.headers['x-vendor-auth-token'] as string | undefined, 'access')) {
      counts.refused++;
      return refused();
    }
    return answer(200, { ok: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    forget: () => tokens.clear(),
    setPassword: (value: string) => (password = value),
  };
}

async function setUp(t: TapTest, password: string | null = 'right') {
  const clock = createFakeClock();
  const device = await startFakeDevice(t, clock);
  const session = createManagementSession({
    baseUrl: () => device.url,
    username: 'admin',
    password: password ?? undefined,
    passwordMissing: 'no password known',
    clock,
    timeoutMs: 5000,
  });
  const probe = async () => {
    const result = await session.call(
      (client, signal) => client.get({ url: '/probe', signal }) as Promise<SdkResult>,
      () => AbortSignal.timeout(5000),
    );
    return 'failure' in result ? result : result.response?.status;
  };
  return { clock, device, session, probe };
}

t.test('one login serves every call while its token lives; concurrent first calls share it', async (t) => {
  const { device, probe } = await setUp(t);
  t.same(await Promise.all([probe(), probe(), probe(), probe()]), [200, 200, 200, 200]);
  for (let i = 0; i < 5; i++) t.equal(await probe(), 200);
  t.same(device.counts, { login: 1, exchange: 0, calls: 9, refused: 0 });
});

t.test('an expiring token is renewed with the refresh token, never the password, until the refresh token runs low', async (t) => {
  const { clock, device, probe } = await setUp(t);
  t.equal(await probe(), 200);
  device.setPassword('changed'); // a password login from here on would fail
  for (let hour = 1; hour <= 8; hour++) {
    clock.advance(3_600_000);
    t.equal(await probe(), 200, `${hour} h later`);
  }
  t.same(
    { login: device.counts.login, exchange: device.counts.exchange },
    { login: 1, exchange: 8 },
    'one exchange per expired token, no second login',
  );
  clock.advance(3_600_000);
  t.equal(await probe(), 200, '9 h: the refresh token runs low; the login is tried, fails, and the refresh token still serves');
  t.same({ login: device.counts.login, exchange: device.counts.exchange }, { login: 2, exchange: 9 });
  device.setPassword('right');
  clock.advance(1_200_000);
  t.equal(await probe(), 200);
  t.equal(device.counts.login, 3, 'the login is tried again while the refresh token runs low, and succeeds');
});

t.test('a device that forgot every token (a restart on a fresh store): one 401, renewed once, then a login', async (t) => {
  const { device, probe } = await setUp(t);
  t.equal(await probe(), 200);
  device.forget();
  t.equal(await probe(), 200, 'answered after the 401, the refused exchange and a fresh login');
  t.same(device.counts, { login: 2, exchange: 1, calls: 3, refused: 1 });
});

t.test('no password, a wrong one, or no device: a failure with the cause, never the password', async (t) => {
  t.same(await (await setUp(t, null)).probe(), { failure: 'no password known' });
  const wrong = await setUp(t, 'wrong password');
  const failure = await wrong.probe();
  t.match(failure, { failure: 'the management login failed', cause: { response: { status: 401 } } });
  t.notMatch(JSON.stringify(failure), /wrong password/);
  const session = createManagementSession({
    baseUrl: () => 'http://127.0.0.1:9',
    username: 'admin',
    password: 'x',
    passwordMissing: '',
    clock: createFakeClock(),
    timeoutMs: 5000,
  });
  t.match(await session.warm(), { failure: 'the management login failed', cause: { error: Error } });
});

t.test('a login at start that the device never answers ends when the process stops, not at its time limit', async (t) => {
  const silent = createServer(() => {}); // accepts the login and never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.closeAllConnections();
    return new Promise((resolve) => silent.close(resolve));
  });
  const session = createManagementSession({
    baseUrl: () => `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    username: 'admin',
    password: 'x',
    passwordMissing: '',
    clock: createFakeClock(),
    timeoutMs: 3_600_000,
  });
  const stopping = new AbortController();
  const arrived = new Promise((resolve) => silent.once('request', resolve));
  const warming = session.warm(stopping.signal);
  await arrived;
  stopping.abort();
  t.match(
    await warming,
    { failure: 'the management login failed', cause: { error: { name: 'AbortError' } } },
    'ended by the stop (the time limit is an hour)',
  );
});

t.test('a device that rotates refresh tokens: an idle session renews itself and never sends the password again', async (t) => {
  // Access tokens of 6 h and refresh tokens of 10 h: with nothing calling, only the keep-alive can renew the
  // refresh token before it runs out (at 10 h), and a login would fail (the password changed on the device).
  const clock = createFakeClock();
  const device = await startFakeDevice(t, clock, { rotate: true, accessSeconds: 21_600 });
  const stopping = new AbortController();
  t.teardown(() => stopping.abort());
  const session = createManagementSession({
    baseUrl: () => device.url,
    username: 'admin',
    password: 'right',
    passwordMissing: '',
    clock,
    timeoutMs: 5000,
    keepAlive: { timers: clock, stop: stopping.signal },
  });
  t.equal(await session.warm(), undefined, 'logged in');
  device.setPassword('changed');
  t.same(clock.pendingTimers(), [18_000_000], "the keep-alive is due when half of the refresh token's 10 h have passed");
  for (let step = 1; step <= 7; step++) {
    await clock.advanceAsync(18_000_000);
    // Joins the keep-alive's exchange under way (the access token it replaced is still live): sends nothing itself.
    t.equal(await session.warm(), undefined, `${step * 5} h`);
    t.same(device.counts, { login: 1, exchange: step, calls: 0, refused: 0 }, `${step * 5} h: one keep-alive exchange per 5 h, no login`);
  }
  const probe = await session.call(
    (client, signal) => client.get({ url: '/probe', signal }) as Promise<SdkResult>,
    () => AbortSignal.timeout(5000),
  );
  t.equal('response' in probe ? probe.response?.status : probe, 200, 'after 35 h, a call goes through on the renewed token');
  stopping.abort();
  t.same(clock.pendingTimers(), [], 'the stop ends the keep-alive');
});

t.test('a device that does not rotate: no keep-alive exchanges (they would renew nothing)', async (t) => {
  const clock = createFakeClock();
  const device = await startFakeDevice(t, clock, { accessSeconds: 21_600 });
  const stopping = new AbortController();
  t.teardown(() => stopping.abort());
  const session = createManagementSession({
    baseUrl: () => device.url,
    username: 'admin',
    password: 'right',
    passwordMissing: '',
    clock,
    timeoutMs: 5000,
    keepAlive: { timers: clock, stop: stopping.signal },
  });
  t.equal(await session.warm(), undefined);
  await clock.advanceAsync(18_000_000);
  t.equal(await session.warm(), undefined);
  t.equal(device.counts.exchange, 1, 'the first keep-alive learns that the device does not rotate');
  t.same(clock.pendingTimers(), [], 'and schedules no more');
});
