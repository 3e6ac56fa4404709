import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES } from '../lib/roles.ts';
import { tempSqliteUrl } from '../app/test-system.ts';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
const ephemeralPorts = Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0']));

t.test('start serves every role, prints each URL, and stops cleanly on SIGTERM', async (t) => {
  const env = { ...process.env, ...ephemeralPorts, PORTOLAN_LOG_LEVEL: 'silent', PORTOLAN_DATABASE: tempSqliteUrl(t).url, PORTOLAN_SHUTDOWN_DRAIN_MS: '0' };
  const child = spawn(process.execPath, [main, 'start'], { env });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  const deadline = Date.now() + 20_000;
  while (!out.includes('Portolan is running') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const urls = Object.fromEntries([...out.matchAll(/^(\w+)\s+(http:\/\/\S+)/gm)].map((m) => [m[1], m[2]]));
  t.same(Object.keys(urls).sort(), [...ROLE_NAMES].sort(), 'a URL per role');
  for (const role of ROLE_NAMES) {
    const response = await fetch(`${urls[role]}/no/such/path`);
    t.equal(response.status, 404, `${role} answers over HTTP`);
    await response.arrayBuffer();
  }
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0, 'exit code 0');
  t.match(out, /Portolan stopped/);
});

t.test('--help lists every setting', async (t) => {
  const child = spawn(process.execPath, [main, '--help']);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  await once(child, 'exit');
  for (const name of ['PORTOLAN_HOST', 'PORTOLAN_GATEWAY_PORT', 'PORTOLAN_BODY_LIMIT', 'PORTOLAN_LOG_LEVEL']) t.match(out, name);
});

t.test('a wrong setting stops the start with a clear message and exit code 2', async (t) => {
  const child = spawn(process.execPath, [main, 'start'], { env: { ...process.env, PORTOLAN_MAPPING_PORT: 'abc' } });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const [code] = await once(child, 'exit');
  t.equal(code, 2);
  t.match(err, /PORTOLAN_MAPPING_PORT must be integer, got 'abc'/);
});
