import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { captureLogs } from '../../lib/test-logger.ts';
import { ADMIN_PASSWORD, declaration, deviceClient, freePort, serviceWithPool, startMember } from './test-device.ts';

t.test('system database variables take effect on the deployed services: qlog trace, access log', async (t) => {
  const log = captureLogs('debug');
  const { system, config } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true, logger: log.logger });
  const client = deviceClient(system.url('device'));
  const member = await startMember(t, 'm1');
  const port = await freePort();
  t.equal(
    (await sdk.deployDeclaration({ client, body: declaration('T', serviceWithPool('S', 'P', port, [member.port])) as never })).response
      ?.status,
    200,
  );
  const secret = 'query-secret-4711';
  const send = async () => {
    const response = await fetch(`http://127.0.0.1:${port}/orders?token=${secret}`, {
      method: 'POST',
      headers: { 'x-api-key': secret },
      body: `payload ${secret}`,
    });
    return response.text();
  };

  t.equal(await send(), 'm1', 'traffic flows before any variable is set');
  t.notOk(
    log.lines.some((line) => JSON.parse(line).msg === 'access'),
    'no access log at the default level (notice)',
  );

  t.equal((await sdk.patchDbVariable({ client, path: { dbName: 'quic.qlogging' }, body: { value: 'enable' } })).response?.status, 200);
  t.equal((await sdk.patchDbVariable({ client, path: { dbName: 'log.access.level' }, body: { value: 'debug' } })).response?.status, 200);
  await send();
  await send();
  const access = log.lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'access');
  t.equal(access.length, 2, 'log.access.level debug: one access line per request');
  t.match(access[0], { method: 'POST', path: '/orders', status: 200 });

  t.equal((await sdk.patchDbVariable({ client, path: { dbName: 'quic.qlogging' }, body: { value: 'disable' } })).response?.status, 200);
  const file = join(config.deviceDataDir, 'trace0.qlog');
  const text = readFileSync(file, 'utf8');
  const trace = JSON.parse(text);
  t.equal(trace.qlog_version, '0.3', 'disabling closes the trace as valid JSON');
  const names = trace.traces[0].events.map((e: { name: string }) => e.name);
  t.ok(
    names.includes('transport:connection_started') && names.includes('http:request'),
    `connections and requests are traced (${[...new Set(names)].join(', ')})`,
  );
  t.equal(names.filter((n: string) => n === 'http:request').length, 2, 'the two requests sent while it was on');
  t.notMatch(text, secret, 'no payload, header value or query string is written');
  t.notMatch(log.text(), secret, 'nor logged');

  await send();
  t.equal(
    JSON.parse(readFileSync(file, 'utf8')).traces[0].events.filter((e: { name: string }) => e.name === 'http:request').length,
    2,
    'nothing is traced once disabled',
  );
});
