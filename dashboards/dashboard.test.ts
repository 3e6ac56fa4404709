// The Grafana dashboard only helps if every metric it queries exists: each name it uses must appear in
// what the reference system serves at /metrics.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';

const dashboard = JSON.parse(readFileSync(new URL('./portolan.json', import.meta.url), 'utf8'));

t.test('every metric the dashboard queries is served at /metrics', async (t) => {
  const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  await fetch(`${system.url('gateway')}/api/vessels`).then((r) => r.arrayBuffer());
  const served = await (await fetch(`${system.url('gateway')}/metrics`)).text();
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((target) => target.expr));
  const names = new Set(exprs.flatMap((expr) => expr.match(/portolan_[a-z_]+/g) ?? []));
  t.ok(names.size >= 6, `the dashboard queries ${names.size} metrics`);
  for (const name of names) t.match(served, new RegExp(`^${name}[{ ]`, 'm'), `${name} is served`);
});

t.test('the dashboard imports into another Grafana: its data source is an input, not a fixed uid', async (t) => {
  t.same(dashboard.__inputs.map((i: { name: string }) => i.name), ['DS_PROMETHEUS']);
  for (const panel of dashboard.panels) t.equal(panel.datasource.uid, '${DS_PROMETHEUS}', `panel ${panel.title}`);
});
