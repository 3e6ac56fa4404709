// One machine's every core: `portolan start --workers 2` on the embedded default (a SQLite file, the rate-limit
// counters in a SQLite file beside it; no Redis, no balancer: the workers share each role's port). The workflows
// of every interface give what one process gives; kill -9 of a worker mid-work loses nothing acknowledged
// (scale-out-workers-kill.test.ts).
import t from 'tap';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startCluster } from './test-cluster.ts';
import { assertSameResults, CONFORMANCE_SETTINGS, conformanceOf } from './test-cluster-conformance.ts';

t.setTimeout(600_000);

t.test(
  "the workflows of every interface, spread over the two workers of `portolan start --workers 2`, give one process's results",
  async (t) => {
    const [workers, single] = await Promise.all([
      startCluster(t, { layout: 'workers', env: CONFORMANCE_SETTINGS }),
      startCluster(t, { layout: 'single', stores: 'embedded', env: CONFORMANCE_SETTINGS }),
    ]);
    if (!workers?.workers || !single) return;
    const [alone, spread] = await Promise.all([conformanceOf(single), conformanceOf(workers)]);
    assertSameResults(t, alone, spread, 'on two workers');

    // Spread over both (connections, not requests, go to the workers in turn: a role whose requests came over
    // one kept-alive connection may have been answered by one worker); the device role by worker 1 alone.
    const byWorker = new Map<number, number>();
    for (const role of ROLE_NAMES) {
      const counts = workers.workers.answered(role);
      t.comment(`${role}: ${[...counts].map(([worker, n]) => `${n} by worker ${worker}`).join(', ')}`);
      for (const [worker, n] of counts) byWorker.set(worker, (byWorker.get(worker) ?? 0) + n);
    }
    t.same([...byWorker.keys()].sort(), [1, 2], 'both workers answered requests');
    t.same([...workers.workers.answered('device').keys()], [1], 'the device role answered by worker 1 alone');
  },
);
