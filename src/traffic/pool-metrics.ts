import { Counter, Gauge, type Registry } from 'prom-client';
import type { Pool } from './pool.ts';

/** The pools whose metrics each registry shows: the metrics exist once per registry, pools are labels. */
const poolsByRegistry = new WeakMap<Registry, Set<Pool>>();

/**
 * Adds the pool's metrics to a prom-client registry, read from the pool at each scrape:
 * - `portolan_pool_member_up{pool,member}`: 1 when the member is in rotation (`up`, or `unchecked`:
 *   not probed yet, and it receives traffic), 0 when it is `down`;
 * - `portolan_pool_member_state_changes_total{pool,member,state}`: how often the member entered each state.
 * Several pools may share one registry.
 *
 * @example
 * registerPoolMetrics(metrics.registry, pool);
 */
export function registerPoolMetrics(registry: Registry, pool: Pool): void {
  const known = poolsByRegistry.get(registry);
  if (known) {
    known.add(pool);
    return;
  }
  const registered = new Set<Pool>([pool]);
  poolsByRegistry.set(registry, registered);
  new Gauge({
    name: 'portolan_pool_member_up',
    help: 'Pool member in rotation (1: up or not yet checked) or marked down by the health monitor (0).',
    labelNames: ['pool', 'member'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const p of registered) {
        for (const m of p.status().members) this.set({ pool: p.name, member: m.address }, m.state === 'down' ? 0 : 1);
      }
    },
  });
  new Counter({
    name: 'portolan_pool_member_state_changes_total',
    help: 'State changes of pool members seen by the health monitor, by the state entered.',
    labelNames: ['pool', 'member', 'state'] as const,
    registers: [registry],
    collect() {
      // The pool keeps the counts; the counter mirrors them at each scrape.
      this.reset();
      for (const p of registered) {
        for (const c of p.stateChanges()) this.inc({ pool: p.name, member: c.member, state: c.to }, c.count);
      }
    },
  });
}
