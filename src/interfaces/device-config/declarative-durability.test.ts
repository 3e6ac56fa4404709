import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { ADMIN_PASSWORD } from './test-device.ts';

const main = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const ROUNDS = 20;
// Forty process starts (a kill and a restart per round): their time is the machine's, so the file gets
// room beyond tap's 120 s default on a loaded machine; nothing asserts on how long a round takes.
t.setTimeout(600_000);
const TENANTS = ['T1', 'T2', 'T3'];

/** Round `r`'s declaration: three tenants, each with many applications, all stamped with `r`. */
function roundDeclaration(r: number) {
  const declaration: Record<string, unknown> = { class: 'ADC', schemaVersion: '3.0.0', id: `round-${r}` };
  for (const [index, tenant] of TENANTS.entries()) {
    const apps: Record<string, unknown> = { class: 'Tenant' };
    for (let a = 0; a < 40; a++) {
      apps[`App${a}`] = {
        class: 'Application',
        remark: `round ${r}`,
        svc: { class: 'Service_HTTP', virtualAddresses: [`10.${r}.${a}.${index + 1}`], pool: 'pool' },
        pool: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: [`192.0.2.${a}`] }] },
      };
    }
    declaration[tenant] = apps;
  }
  return { class: 'AS3', action: 'deploy', persist: true, declaration };
}

/** The round every application of a tenant carries, 'none' when it is not deployed, 'mixed' when its applications disagree. */
function roundOf(tenant: any): number | 'none' | 'mixed' {
  if (!tenant) return 'none';
  const rounds = new Set(
    Object.values(tenant)
      .filter((app: any) => app?.class === 'Application')
      .map((app: any) => String(app.remark)),
  );
  if (rounds.size !== 1 || Object.keys(tenant).length !== 41) return 'mixed';
  return Number([...rounds][0]!.slice('round '.length));
}

async function startDevice(t: TapTest, database: string, dataDir: string) {
  const env = {
    ...process.env,
    PORTOLAN_ROLES: 'device',
    PORTOLAN_DEVICE_PORT: '0',
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_DATABASE: database,
    PORTOLAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
    PORTOLAN_DEVICE_DATA_DIR: dataDir,
  };
  const child = spawn(process.execPath, [main, 'start'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  while (!/device\s+http:\/\/\S+/.test(out)) {
    if (child.exitCode !== null) throw new Error(`the device exited early:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { child, url: /device\s+(http:\/\/\S+)/.exec(out)![1]! };
}

const kill = async (child: ChildProcess) => {
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
};

t.test(
  `${ROUNDS} rounds of kill -9 during a persisted deployment: after each restart every tenant is wholly old or wholly new`,
  async (t) => {
    const { url: database, dir } = tempSqliteUrl(t);
    const headers = { authorization: basicAuthorization('admin', ADMIN_PASSWORD), 'content-type': 'application/json' };
    let saved = 0; // the newest round known to be saved
    // Even rounds wait for the answer before the kill (the new tenants must then survive); odd rounds kill
    // after a fixed spread of delays (0 to ~400 ms after sending), landing before, during or after the
    // save depending on the machine. The assertions hold wherever the kill lands: nothing here depends on speed.
    const delays = Array.from({ length: ROUNDS }, (_, r) => (r * 97) % 420);
    for (let r = 1; r <= ROUNDS; r++) {
      const device = await startDevice(t, database, `${dir}/device`);
      const sent = fetch(`${device.url}/mgmt/shared/appsvcs/declare`, {
        method: 'POST',
        headers,
        body: JSON.stringify(roundDeclaration(r)),
      }).then(
        (response) => response.status,
        () => 'cut' as const,
      );
      if (r % 2 === 0) t.equal(await sent, 200, `round ${r}: answered before the kill`);
      else await new Promise((resolve) => setTimeout(resolve, delays[r - 1]));
      await kill(device.child);
      const status = await sent;

      const after = await startDevice(t, database, `${dir}/device`);
      const response = await fetch(`${after.url}/mgmt/shared/appsvcs/declare`, { headers });
      const body = response.status === 204 ? {} : ((await response.json()) as Record<string, unknown>);
      const rounds = TENANTS.map((tenant) => roundOf(body[tenant]));
      t.equal(new Set(rounds).size, 1, `round ${r}: all tenants come from one declaration (${rounds.join(', ')})`);
      t.ok(
        [saved === 0 ? 'none' : saved, r].includes(rounds[0] as never),
        `round ${r}: old (${saved || 'none'}) or new (${r}), got ${rounds[0]}`,
      );
      if (status === 200) t.equal(rounds[0], r, `round ${r}: an answered deployment survives the kill`);
      if (rounds[0] === r) saved = r;
      await kill(after.child);
    }
  },
);
