import t from 'tap';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../../../generated/health/client/index.ts';
import { getHealth } from '../../../generated/health/sdk.gen.ts';
import { ROLE_NAMES } from '../../lib/roles.ts';
import { startTestSystem, tempSqliteUrl } from '../../app/test-system.ts';
import type { SqliteDatabase } from '../../stores/sqlite.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { startTcpProxy } from '../../stores/test-tcp-proxy.ts';

// Response validation is on in the test system: each /health answer is also checked against the spec.

const health = async (baseUrl: string) => {
  const { data, error, response } = await getHealth({ client: createClient({ baseUrl }) });
  return { status: response?.status, body: data ?? error };
};

t.test('every role answers 200 healthy with its database connected', async (t) => {
  const { system } = await startTestSystem(t);
  for (const role of ROLE_NAMES) {
    const { status, body } = await health(system.url(role));
    t.equal(status, 200, `${role}: 200`);
    t.match(body, {
      status: 'healthy',
      database: 'connected',
      services: 'available',
      timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    });
  }
});

t.test('embedded store lost: 503 on every role within the check timeout, 200 again after recovery', async (t) => {
  const { url, dir } = tempSqliteUrl(t);
  const { system } = await startTestSystem(t, { config: { database: url, healthCheckTimeoutMs: 300 } });
  const mapping = system.url('mapping');
  t.equal((await health(mapping)).status, 200, 'healthy');
  // The file's directory disappears and the open handle is lost: reopening fails until it is back.
  (system.database as SqliteDatabase).dropConnectionForTest();
  renameSync(join(dir, 'data'), join(dir, 'gone'));
  for (const role of ROLE_NAMES) {
    const { status, body } = await health(system.url(role));
    t.equal(status, 503, `${role}: 503`);
    t.match(body, { status: 'unhealthy', database: 'disconnected' });
  }
  const failing = await fetch(`${mapping}/api/charts`);
  t.equal(failing.status, 503, 'a request needing the store gets 503');
  t.same(await failing.json(), { status: 'error', message: 'The store is unavailable; try again later.' });
  renameSync(join(dir, 'gone'), join(dir, 'data'));
  t.match(await health(mapping), { status: 200, body: { status: 'healthy', database: 'connected' } }, 'healthy again, no restart');
  t.equal((await fetch(`${mapping}/api/charts`)).status, 200, 'the store answers again');
});

t.test('PostgreSQL unreachable: 503 within the check timeout, 200 again after recovery', async (t) => {
  const databaseUrl = await withTestPostgres(t);
  if (!databaseUrl) return;
  const target = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  t.teardown(() => proxy.close());
  const viaProxy = new URL(databaseUrl);
  viaProxy.port = String(proxy.port);
  const { system } = await startTestSystem(t, { config: { database: viaProxy.toString(), healthCheckTimeoutMs: 400 } });
  const mapping = system.url('mapping');
  t.equal((await health(mapping)).status, 200, 'healthy through the proxy');
  for (const mode of ['hold', 'refuse'] as const) {
    await proxy.pause(mode);
    const { status, body } = await health(mapping);
    t.equal(status, 503, `server ${mode === 'hold' ? 'hung' : 'stopped'}: 503`);
    t.match(body, { status: 'unhealthy', database: 'disconnected' });
    await proxy.resume();
    let recovered = await health(mapping);
    for (let i = 0; i < 20 && recovered.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      recovered = await health(mapping);
    }
    t.match(recovered, { status: 200, body: { status: 'healthy' } }, 'healthy again without a restart');
  }
  t.equal((await fetch(`${mapping}/api/charts`)).status, 200, 'queries work again');
});
