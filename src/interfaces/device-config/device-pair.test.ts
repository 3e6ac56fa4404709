// Two device processes of one pair on one store, in one test process: each its own database handle, data
// plane (a fake that records what it serves) and timers on one fake clock. "Killing" a process cancels its
// timers (it renews nothing more) and leaves it as it was, mid-work. Run on SQLite and on PostgreSQL.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { tempSqliteUrl } from '../../app/test-system.ts';
import { createFakeClock, type FakeClock } from '../../lib/clock.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import type { Cancel, Timers } from '../../lib/timers.ts';
import type { Database } from '../../stores/database.ts';
import { JOB_MIGRATIONS } from '../../stores/job-queue.ts';
import { openDatabase } from '../../stores/open-database.ts';
import { withTestPostgres } from '../../stores/test-postgres.ts';
import { schemaAt, spec } from './declaration/test-spec.ts';
import type { DataPlanePort } from './declarative-service.ts';
import { createDeviceRole } from './device-role.ts';
import { APPSVCS_INFO } from './device-version.ts';
import { failoverStatusBody } from './failover-handlers.ts';
import { DEVICE_CONFIG_MIGRATIONS } from './migrations.ts';

const LEASE_MS = 4000;
const STEP_MS = LEASE_MS / 4;
const MIGRATIONS = [...JOB_MIGRATIONS, ...DEVICE_CONFIG_MIGRATIONS];

/** Waits for I/O (the clock does not move) until `check` holds; fails rather than hang if it never does. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await check()) return;
    await sleep(5);
  }
  throw new Error(`still waiting until ${what}`);
}

/** Moves the clock a renewal period at a time (letting I/O settle) until `check` holds; how many periods it took. */
async function stepUntil(clock: FakeClock, check: () => boolean | Promise<boolean>, most: number, what: string): Promise<number> {
  for (let step = 0; step <= most; step++) {
    if (await check()) return step;
    await clock.advanceAsync(STEP_MS);
    await sleep(20);
  }
  throw new Error(`not within ${most} renewal periods: ${what}`);
}

/** The shared clock's timers for one process, cancelled all at once when it is "killed". */
function killableTimers(clock: FakeClock) {
  let dead = false;
  const live = new Set<Cancel>();
  const timers: Timers = {
    after(ms, fn) {
      if (dead) return () => undefined;
      const cancel = clock.after(ms, () => {
        live.delete(cancel);
        if (!dead) fn();
      });
      live.add(cancel);
      return cancel;
    },
  };
  return {
    timers,
    kill() {
      dead = true;
      for (const cancel of live) cancel();
    },
  };
}

/** A data plane that records the service keys it serves; `holdNext` makes the next apply wait until released. */
function fakeDataPlane() {
  let serving: string[] = [];
  let held: { release: () => void; started: Promise<void> } | undefined;
  let markStarted: () => void = () => undefined;
  const applied: string[][] = [];
  const plane: DataPlanePort = {
    async apply(services) {
      const keys = services.map((s) => s.key);
      applied.push(keys);
      if (held) {
        const wait = held;
        held = undefined;
        markStarted();
        await new Promise<void>((resolve) => (wait.release = resolve));
      }
      serving = keys;
      return { ok: true };
    },
  };
  return {
    plane,
    serving: () => serving,
    applied,
    holdNext() {
      const started = new Promise<void>((resolve) => (markStarted = resolve));
      held = { release: () => undefined, started };
      const entry = held;
      return { started, release: () => entry.release() };
    },
  };
}

const declaration = (tenant: string, address: string) => ({
  class: 'AS3',
  action: 'deploy',
  persist: true,
  declaration: {
    class: 'ADC',
    schemaVersion: '3.0.0',
    [tenant]: {
      class: 'Tenant',
      A1: {
        class: 'Application',
        web: { class: 'Service_HTTP', virtualAddresses: [address], pool: 'p' },
        p: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: ['192.0.2.1'] }] },
      },
    },
  },
});
const bytes = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));

type Options = { holderGone?: (holder: string) => boolean };

/** One device process on `url`: its own database handle, data plane and timers. */
async function startProcess(t: TapTest, url: string, clock: FakeClock, name: string, options: Options = {}) {
  const db = await openDatabase(url, { migrations: MIGRATIONS });
  const { timers, kill } = killableTimers(clock);
  const data = fakeDataPlane();
  const holder = `test-machine:${name}:${randomUUID()}`;
  const device = createDeviceRole({
    db,
    dataPlane: data.plane,
    clock,
    timers,
    logger: pino({ level: 'silent' }),
    hostname: 'device-1.example.net',
    info: APPSVCS_INFO,
    schemas: async () => schemaAt,
    document: spec,
    newTaskId: randomUUID,
    holder,
    url: () => `http://${name}.example.net:8100`,
    leaseMs: LEASE_MS,
    ...options,
  });
  let killed = false;
  t.teardown(async () => {
    if (!killed) await device.stop();
    await db.close();
  });
  await device.start();
  return {
    db,
    data,
    device,
    holder,
    url: `http://${name}.example.net:8100`,
    role: () =>
      failoverStatusBody(device.pair.status()).entries['https://localhost/mgmt/tm/cm/failover-status/0']!.nestedStats.entries.status
        .description,
    /** Dies where it is: no more renewals, nothing released. */
    kill() {
      killed = true;
      kill();
    },
  };
}

const taskState = async (db: Database, id: string) =>
  (await db.query('SELECT state, record FROM device_deploy_tasks WHERE id = $1', [id]))[0] as { state: string; record: string } | undefined;

function runPairSuite(t: TapTest, url: (t: TapTest) => Promise<string | undefined>) {
  t.test('the first process is active at once, the second stands by; failover-status tells which is which', async (t) => {
    const where = await url(t);
    if (!where) return;
    const clock = createFakeClock();
    const a = await startProcess(t, where, clock, 'a');
    const b = await startProcess(t, where, clock, 'b');
    t.equal(a.role(), 'ACTIVE');
    t.equal(b.role(), 'STANDBY');
    const standby = failoverStatusBody(b.device.pair.status());
    t.match(JSON.stringify(standby), 'active device http://a.example.net:8100', 'the standby names the active one');
    t.match(standby.entries['https://localhost/mgmt/tm/cm/failover-status/0']!.nestedStats.entries, {
      color: { description: 'gray' },
      summary: { description: '0/1 active' },
    });
    await stepUntil(clock, () => false, 8, 'two lease periods pass').catch(() => undefined);
    t.equal(a.role(), 'ACTIVE', 'the active one keeps its lease by renewing it');
    t.equal(b.role(), 'STANDBY');
  });

  t.test(
    'the standby refuses a synchronous deployment naming the active one, and queues an asynchronous one the active one runs',
    async (t) => {
      const where = await url(t);
      if (!where) return;
      const clock = createFakeClock();
      const a = await startProcess(t, where, clock, 'a');
      const b = await startProcess(t, where, clock, 'b');
      const refused = await b.device.service.deploy(bytes(declaration('T1', '10.0.0.1')), {});
      t.match(refused, { ok: false, error: { code: 'deviceStandby', message: /the active device is http:\/\/a\.example\.net:8100/ } });
      t.same(b.data.applied, [], 'the standby binds nothing');

      const queued = await b.device.service.deploy(bytes(declaration('T1', '10.0.0.1')), { async: true });
      if (!queued.ok || queued.value.kind !== 'accepted') throw new Error('the standby did not queue the deployment');
      const id = queued.value.task.id;
      // The busy answer holds across processes: a task queued through the standby makes the active one busy.
      t.match(await a.device.service.deploy(bytes(declaration('T2', '10.0.0.2')), {}), { ok: false, error: { code: 'deploymentBusy' } });
      await stepUntil(clock, async () => (await taskState(a.db, id))?.state === 'done', 4, 'the active one runs the task');
      t.match(JSON.parse((await taskState(a.db, id))!.record), { id, results: [{ code: 200, message: 'success', tenant: 'T1' }] });
      t.same(a.data.serving(), ['/T1/A1/web'], 'the active one serves it');
      t.match(await b.device.service.declaration(), /"T1":/, 'the standby reads the saved declaration from the store');
      t.match(await b.device.service.tenantDeclaration(['T9']), { ok: false, error: { code: 'tenantNotFound' } });
    },
  );

  t.test(
    'the active one dies mid-task: the standby takes over after the lease lapses, binds, and finishes the task exactly once',
    async (t) => {
      const where = await url(t);
      if (!where) return;
      const clock = createFakeClock();
      const a = await startProcess(t, where, clock, 'a');
      const b = await startProcess(t, where, clock, 'b');
      t.match(await a.device.service.deploy(bytes(declaration('T1', '10.0.0.1')), {}), { ok: true }, 'a deployment before the death');

      const hold = a.data.holdNext();
      const queued = await a.device.service.deploy(bytes(declaration('T2', '10.0.0.2')), { async: true });
      if (!queued.ok || queued.value.kind !== 'accepted') throw new Error('not queued');
      const id = queued.value.task.id;
      await hold.started; // the active one is binding the task's tenant
      a.kill();

      const periods = await stepUntil(clock, () => b.device.pair.isActive(), 12, 'the standby takes the lease');
      t.ok(periods >= 3, `not before the lease lapsed (${periods} renewal periods)`);
      t.equal(b.role(), 'ACTIVE');
      await stepUntil(clock, async () => (await taskState(b.db, id))?.state === 'done', 12, 'the queued task is resumed and done');
      t.same(b.data.serving().sort(), ['/T1/A1/web', '/T2/A1/web'], 'the new active one serves the saved tenant and the task');
      const record = (await taskState(b.db, id))!.record;
      t.match(JSON.parse(record), { id, results: [{ code: 200, message: 'success', tenant: 'T2' }] });

      // The dead one wakes up (a paused process): its writes are fenced, nothing of its run is recorded.
      hold.release();
      await sleep(100);
      t.equal((await taskState(b.db, id))!.record, record, 'the record stays the one the new active one wrote');
      const history = await b.db.query('SELECT declaration FROM device_declaration_history');
      t.equal(history.filter((row) => String(row.declaration).includes('"T2"')).length, 1, 'the task ran to completion once');
      const jobs = await b.db.query(`SELECT state FROM jobs WHERE queue = 'appsvcs-tasks'`);
      t.same(
        jobs.map((row) => row.state),
        ['done'],
        'its job is done, nothing left running',
      );
    },
  );

  t.test(
    'asynchronous deployments queued on both processes while the active one dies: every acknowledged one ends, and its record outlives the next 100 synchronous operations',
    async (t) => {
      const where = await url(t);
      if (!where) return;
      const clock = createFakeClock();
      const a = await startProcess(t, where, clock, 'a');
      const b = await startProcess(t, where, clock, 'b');
      const ids: string[] = [];
      const queue = async (on: typeof a, tenant: string, address: string) => {
        const queued = await on.device.service.deploy(bytes(declaration(tenant, address)), { async: true });
        if (!queued.ok || queued.value.kind !== 'accepted') throw new Error(`not queued: ${JSON.stringify(queued)}`);
        ids.push(queued.value.task.id);
      };
      const hold = a.data.holdNext();
      await queue(a, 'T1', '10.0.0.1');
      await hold.started; // the active one is binding T1
      await queue(b, 'T2', '10.0.0.2'); // through the standby
      await queue(a, 'T3', '10.0.0.3'); // through the active one, waiting behind T1
      a.kill();

      await stepUntil(clock, () => b.device.pair.isActive(), 12, 'the standby takes the lease');
      await stepUntil(
        clock,
        async () => (await Promise.all(ids.map((id) => taskState(b.db, id)))).every((task) => task?.state === 'done'),
        40,
        'every queued task ends',
      );
      // Another client's synchronous operations (a management system deploying its topologies): each leaves a
      // record too, answered with its result already; they do not push out a record a client polls for.
      const refused: string[] = [];
      for (let i = 0; i < 100; i++) {
        const removed = await b.device.service.remove(['Elsewhere']);
        if (!removed.ok) refused.push(removed.error.code);
      }
      t.same(refused, [], '100 synchronous operations ran');
      const answers = await Promise.all(ids.map((id) => b.device.service.getTask(id)));
      t.same(
        answers.flatMap((answer, i) => (answer.ok ? [] : [`${ids[i]}: ${answer.error.message}`])),
        [],
        'every acknowledged task id is readable',
      );
      for (const [i, answer] of answers.entries()) {
        if (!answer.ok) continue;
        t.match(
          JSON.parse(answer.value),
          { id: ids[i], results: [{ code: 200, tenant: `T${i + 1}` }] },
          `task ${i + 1} ended with its result`,
        );
      }
      t.equal(JSON.parse(await b.device.service.listTasks()).items.length, 100, 'the task list still shows the last 100');
    },
  );

  t.test('an active one that finds its lease taken stops its data plane at once and refuses deployments', async (t) => {
    const where = await url(t);
    if (!where) return;
    const clock = createFakeClock();
    const a = await startProcess(t, where, clock, 'a');
    t.match(await a.device.service.deploy(bytes(declaration('T1', '10.0.0.1')), {}), { ok: true });
    t.same(a.data.serving(), ['/T1/A1/web']);
    // Another process takes the lease (as if this one had been paused past its expiry).
    await a.db.execute(
      `UPDATE device_active_lease SET holder = 'elsewhere:1:x', url = 'http://c.example.net:8100', generation = generation + 1`,
    );
    await stepUntil(clock, () => !a.device.pair.isActive(), 2, 'the renewal finds the lease taken');
    await until(() => a.data.serving().length === 0, 'the data plane is emptied');
    t.equal(a.role(), 'STANDBY');
    t.match(await a.device.service.deploy(bytes(declaration('T1', '10.0.0.9')), {}), {
      ok: false,
      error: { code: 'deviceStandby', message: /http:\/\/c\.example\.net:8100/ },
    });
  });

  t.test('a process restarted after a crash takes the lease at once when its former holder is certainly gone', async (t) => {
    const where = await url(t);
    if (!where) return;
    const clock = createFakeClock();
    const a = await startProcess(t, where, clock, 'a');
    a.kill();
    const unsure = await startProcess(t, where, clock, 'b', { holderGone: () => false });
    t.equal(unsure.role(), 'STANDBY', 'a live (or unknown) holder keeps the lease until it lapses');
    const sure = await startProcess(t, where, clock, 'c', { holderGone: (holder) => holder === a.holder });
    t.equal(sure.role(), 'ACTIVE', 'a gone holder: taken at start, without waiting');
  });
}

t.test('on SQLite', async (t) => runPairSuite(t, async (t) => tempSqliteUrl(t).url));
t.test('on PostgreSQL', async (t) => runPairSuite(t, withTestPostgres));
