// The multi-machine layout, proven on one machine: two processes of every role on one PostgreSQL and one Redis,
// HAProxy in front with the configuration `portolan haproxy-config` writes (test-cluster.ts). The workflows of
// every interface give what one process gives; kill -9 of a process mid-work loses nothing acknowledged
// (scale-out-kill.test.ts). The same for `portolan start --workers 2`: scale-out-workers.test.ts.
import t from 'tap';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startCluster } from './test-cluster.ts';
import { assertSameResults, CONFORMANCE_SETTINGS, conformanceOf } from './test-cluster-conformance.ts';

t.setTimeout(600_000);

/** Requests each process answered (its /metrics), HAProxy's checks left out. */
async function answered(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('portolan_http_requests_total{') && !/operation="(getHealth|getFailoverStatus)"/.test(line))
      sum += Number(line.split(' ').at(-1));
  return sum;
}

t.test(
  "the workflows of every interface, spread request by request over two processes of each role behind HAProxy, give one process's results",
  async (t) => {
    const [cluster, single] = await Promise.all([
      startCluster(t, { env: CONFORMANCE_SETTINGS }),
      startCluster(t, { layout: 'single', env: CONFORMANCE_SETTINGS }),
    ]);
    if (!cluster || !single) return;
    const [alone, spread] = await Promise.all([conformanceOf(single), conformanceOf(cluster)]);
    assertSameResults(t, alone, spread, 'behind HAProxy');

    // Request by request over both processes: each one of every role answered part of the workflows (of the
    // device pair, the standby its reads).
    for (const role of ROLE_NAMES) {
      const counts = await Promise.all(cluster.nodes.filter((n) => n.role === role).map((n) => answered(n.url)));
      t.ok(counts.length === 2 && counts.every((n) => n > 0), `both ${role} processes answered requests (${counts.join(' and ')})`);
    }
  },
);
