import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { runSnapshotCli } from '../../cli/snapshot.ts';

const ADMIN_PASSWORD = 'snapshot loop pw';

t.test(
  'the whole loop on the project alone: a snapshot of the device, uploaded with the portolan snapshot client, processed, its hits read',
  async (t) => {
    const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD, deviceHostname: 'loop-device.example.net' } });
    const device = system.url('device');
    const auth = { authorization: basicAuthorization('admin', ADMIN_PASSWORD), 'content-type': 'application/json' };
    // A problem to find: a pool whose only member has no monitor.
    const declaration = {
      class: 'ADC',
      schemaVersion: '3.0.0',
      id: 'loop',
      Loop: {
        class: 'Tenant',
        App: {
          class: 'Application',
          template: 'generic',
          pool: { class: 'Pool', members: [{ servicePort: 8080, serverAddresses: ['192.0.2.44'] }] },
        },
      },
    };
    t.equal(
      (await fetch(`${device}/mgmt/shared/appsvcs/declare`, { method: 'POST', headers: auth, body: JSON.stringify(declaration) })).status,
      200,
    );

    const snapshot = await fetch(`${device}/mgmt/shared/diagnostics/snapshot`, { headers: auth });
    t.equal(snapshot.status, 200);
    const dir = mkdtempSync(join(tmpdir(), 'portolan-loop-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'device.snapshot.tgz');
    writeFileSync(file, Buffer.from(await snapshot.arrayBuffer()));

    const env = {
      PORTOLAN_DIAGNOSTICS_URL: system.url('diagnostics'),
      PORTOLAN_LOGIN_URL: system.url('login'),
      PORTOLAN_DIAGNOSTICS_USER: 'admin',
      PORTOLAN_DIAGNOSTICS_PASSWORD: ADMIN_PASSWORD,
    };
    const sleeps: number[] = [];
    // Polls come back at once (the waits are recorded, not slept): nothing here depends on the machine's speed.
    const sleep = async (ms: number) => void sleeps.push(ms);
    const upload = await runSnapshotCli(['upload', file, '--wait', '--max-polls', '100000'], { env, sleep });
    t.equal(upload.code, 0, upload.stderr);
    const id = /\b(\d+)\b/.exec(upload.stdout)?.[1];
    t.ok(id && id !== '0', `the client printed the new id (${upload.stdout.trim()})`);
    t.ok(
      sleeps.every((ms) => ms === 2000),
      'it waits 2 s between polls, as real clients do',
    );

    const hits = await runSnapshotCli(['hits', id!], { env, sleep });
    t.equal(hits.code, 0, hits.stderr);
    t.match(hits.stdout, /pool-without-monitor/, 'the planted problem is a hit');
    t.notMatch(`${upload.stdout}${upload.stderr}${hits.stdout}${hits.stderr}`, new RegExp(ADMIN_PASSWORD), 'the password never shows');
  },
);
