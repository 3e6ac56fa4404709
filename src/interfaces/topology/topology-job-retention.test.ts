import t from 'tap';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '../../../generated/topology/client/index.ts';
import * as sdk from '../../../generated/topology/sdk.gen.ts';
import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';
import { startTestSystem, tempSqliteUrl } from '../../app/test-system.ts';
import { loadSpecExample } from './test-topology.ts';

const ADMIN_PASSWORD = 'retention admin pw';
const DAY_MS = 86_400_000;

/** Waits (bounded in tries, not in time) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`still waiting until ${what}`);
}

t.test(
  'finished deployment jobs are purged after PORTOLAN_CENTRAL_JOB_RETENTION_S on the injected clock; the task record stays',
  async (t) => {
    const { url: database } = tempSqliteUrl(t);
    const { system, clock } = await startTestSystem(t, {
      fakeTimers: true,
      config: {
        database,
        adminPassword: ADMIN_PASSWORD,
        deviceHostname: 'sslo-device-1.example.net',
        centralJobRetentionSeconds: 7 * 86_400,
      },
    });
    // A new login each time: tokens expire on the same clock (20 minutes).
    const loggedIn = async () => {
      const login = await sdk.loginManagementUser({
        client: createClient({ baseUrl: system.url('central') }),
        body: { username: 'admin', password: ADMIN_PASSWORD, loginProviderName: 'local' },
      });
      return createClient({ baseUrl: system.url('central'), headers: { 'X-Vendor-Auth-Token': login.data!.token.token } });
    };
    /** Deploys the spec's example (renamed by `suffix`) and waits until its task has ended; the task id. */
    const deployed = async (suffix: string) => {
      const body = JSON.parse(
        JSON.stringify(await loadSpecExample<TopologyRequest>('l3Outbound'))
          .replaceAll('sslo_outbound', `sslo_${suffix}`)
          .replaceAll('policy_outbound', `policy_${suffix}`)
          .replaceAll('ssl_outbound', `ssl_${suffix}`)
          .replaceAll('chain_icap', `chain_${suffix}`)
          .replaceAll('icap_dlp', `icap_${suffix}`),
      ) as TopologyRequest;
      const client = await loggedIn();
      const created = await sdk.createTopology({ client, body });
      t.equal(created.response?.status, 202, created.error ? JSON.stringify(created.error) : `topology ${suffix} accepted`);
      const taskId = created.data!.id;
      await until(
        async () => (await sdk.getTopologyTask({ client, path: { taskId } })).data?.status !== 'STARTED',
        `task ${taskId} has ended`,
      );
      return taskId;
    };

    const db = new DatabaseSync(database.slice('sqlite:'.length), { readOnly: true });
    t.teardown(() => db.close());
    const finishedJobs = () =>
      db
        .prepare("SELECT id FROM jobs WHERE queue = 'topology-deploy' AND state IN ('done', 'failed') ORDER BY id")
        .all()
        .map((row) => row.id);
    const first = await deployed('first');
    await until(() => finishedJobs().length === 1, 'the job is recorded finished');

    // In one leap (each timer due fires once): the daily purge runs, a week has not passed.
    clock.advance(6 * DAY_MS);
    const second = await deployed('second');
    await until(() => finishedJobs().length === 2, 'the second job is recorded finished');
    t.same(finishedJobs(), [first, second].sort(), 'six days on, nothing is purged');
    clock.advance(DAY_MS);
    await until(() => finishedJobs().length === 1, 'the week-old job is purged');
    t.same(finishedJobs(), [second], 'the younger job stays');
    t.equal(
      (await sdk.getTopologyTask({ client: await loggedIn(), path: { taskId: first } })).data?.status,
      'FINISHED',
      'the task record is not a job row: it stays',
    );
  },
);
