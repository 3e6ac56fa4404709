import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ALL_MIGRATIONS } from '../../app/modules.ts';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { findFreePorts } from '../../lib/free-ports.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { ADMIN_PASSWORD } from './test-device.ts';

const main = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const ROUNDS = 3;
// Short, for a quick takeover; long enough that a loaded machine's slow first deployment does not lose it.
const LEASE_MS = 2000;
/** Polls of a survivor, one every quarter lease: the takeover must come within this many lease periods. */
const MOST_LEASE_PERIODS = 15;
// Process starts are the machine's time: room beyond tap's default on a loaded machine; nothing asserts on durations.
t.setTimeout(300_000);

const headers = { authorization: basicAuthorization('admin', ADMIN_PASSWORD), 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Device = { child: ChildProcess; url: string };

async function startDevice(t: TapTest, database: string, dataDir: string): Promise<Device> {
  const env = {
    ...process.env,
    PORTOLAN_ROLES: 'device',
    PORTOLAN_DEVICE_PORT: '0',
    PORTOLAN_DEVICE_PORT_OFFSET: '0',
    PORTOLAN_DEVICE_LEASE_MS: String(LEASE_MS),
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
    await sleep(20);
  }
  return { child, url: /device\s+(http:\/\/\S+)/.exec(out)![1]! };
}

const kill = async (child: ChildProcess) => {
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
};

async function roleOf(device: Device): Promise<string> {
  const response = await fetch(`${device.url}/mgmt/tm/cm/failover-status`, { headers });
  const body = (await response.json()) as any;
  return body.entries['https://localhost/mgmt/tm/cm/failover-status/0'].nestedStats.entries.status.description;
}

/** Round `r`'s declaration: a tenant on a loopback port (the active device serves it) and one of many applications. */
function roundDeclaration(r: number, port: number) {
  const bulk: Record<string, unknown> = { class: 'Tenant' };
  for (let a = 0; a < 40; a++) {
    bulk[`App${a}`] = {
      class: 'Application',
      remark: `round ${r}`,
      svc: { class: 'Service_HTTP', virtualAddresses: [`10.${r}.${a}.1`], pool: 'pool' },
      pool: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: [`192.0.2.${a}`] }] },
    };
  }
  const live = {
    class: 'Tenant',
    A1: {
      class: 'Application',
      web: { class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], virtualPort: port, pool: 'pool' },
      pool: { class: 'Pool', members: [{ servicePort: 9, serverAddresses: ['127.0.0.1'] }] },
    },
  };
  return {
    class: 'AS3',
    action: 'deploy',
    persist: true,
    declaration: { class: 'ADC', schemaVersion: '3.0.0', id: `round-${r}`, Bulk: bulk, Live: live },
  };
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

t.test(
  `${ROUNDS} rounds of kill -9 of the active device process mid asynchronous deployment: the standby takes over and finishes the task once`,
  async (t) => {
    const { url: database, dir } = tempSqliteUrl(t);
    let active = await startDevice(t, database, `${dir}/a`);
    let standby = await startDevice(t, database, `${dir}/b`);
    t.equal(await roleOf(active), 'ACTIVE', 'the first process is active');
    t.equal(await roleOf(standby), 'STANDBY', 'the second stands by');
    // The first deployment loads the declaration schemas: done once before the rounds.
    const warm = await fetch(`${active.url}/mgmt/shared/appsvcs/declare`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ class: 'AS3', action: 'retrieve' }),
    });
    t.ok([200, 204].includes(warm.status), 'the active one deploys');
    const taskIds: string[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      // An acknowledged synchronous write through the standby (passed on): it must survive the kill.
      const [syncPort, asyncPort] = await findFreePorts(2);
      const passed = await fetch(`${standby.url}/mgmt/shared/appsvcs/declare`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          ...roundDeclaration(r, syncPort!),
          declaration: { class: 'ADC', schemaVersion: '3.0.0', [`Sync${r}`]: roundDeclaration(r, syncPort!).declaration.Live },
        }),
      });
      t.equal(passed.status, 200, `round ${r}: a deployment sent to the standby is passed on and answered (${await passed.text()})`);

      const queued = await fetch(`${standby.url}/mgmt/shared/appsvcs/declare?async=true`, {
        method: 'POST',
        headers,
        body: JSON.stringify(roundDeclaration(r, asyncPort!)),
      });
      t.equal(queued.status, 202, `round ${r}: queued`);
      const { id } = (await queued.json()) as { id: string };
      taskIds.push(id);
      await sleep((r * 37) % 120); // lands before, during or after the run: the assertions hold wherever
      await kill(active.child);

      let polls = 0;
      while (polls <= MOST_LEASE_PERIODS * 4 && (await roleOf(standby)) !== 'ACTIVE') {
        polls++;
        await sleep(LEASE_MS / 4);
      }
      t.ok(
        polls <= MOST_LEASE_PERIODS * 4,
        `round ${r}: the standby takes over within ${MOST_LEASE_PERIODS} lease periods (${polls} polls)`,
      );
      [active, standby] = [standby, await startDevice(t, database, `${dir}/r${r}`)];
      t.equal(await roleOf(standby), 'STANDBY', `round ${r}: the restarted process stands by`);

      let record: any;
      for (let poll = 0; poll <= MOST_LEASE_PERIODS * 4; poll++) {
        record = await (await fetch(`${active.url}/mgmt/shared/appsvcs/task/${id}`, { headers })).json();
        if (record.results[0].code !== 0) break;
        await sleep(LEASE_MS / 4);
      }
      t.match(record, { id, results: [{ code: 200, message: /^(success|no change)$/ }] }, `round ${r}: the task ended done`);
      const declared = (await (await fetch(`${standby.url}/mgmt/shared/appsvcs/declare`, { headers })).json()) as Record<string, any>;
      t.ok(declared[`Sync${r}`], `round ${r}: the acknowledged synchronous deployment is kept`);
      t.equal(declared.Bulk?.App0?.remark, `round ${r}`, `round ${r}: the queued deployment is saved`);
      t.ok(await listening(asyncPort!), `round ${r}: the new active process serves the task's tenant`);
      t.ok(await listening(syncPort!), `round ${r}: and the synchronous one's`);
    }

    // Straight from the store: each task ran to completion once (one saved declaration each), none left running.
    const db = await openDatabase(database, { migrations: ALL_MIGRATIONS });
    t.teardown(() => db.close());
    const history = (await db.query('SELECT declaration FROM device_declaration_history')).map((row) => String(row.declaration));
    for (const [index, id] of taskIds.entries()) {
      const saves = history.filter((text) => text.includes(`"round-${index + 1}"`) && text.includes('"Bulk"'));
      t.equal(saves.length, 1, `task ${index + 1} saved its declaration exactly once`);
      t.match((await db.query('SELECT state FROM device_deploy_tasks WHERE id = $1', [id]))[0], { state: 'done' });
    }
    t.same(
      await db.query(`SELECT id FROM jobs WHERE queue = 'appsvcs-tasks' AND state <> 'done'`),
      [],
      'no task job left queued or running',
    );
    await kill(active.child);
    await kill(standby.child);
  },
);
