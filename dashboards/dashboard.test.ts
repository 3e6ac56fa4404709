// The Grafana dashboard only helps if every metric it queries exists: each name it uses must appear in
// what the reference system serves at /metrics.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { startTestSystem } from '../src/app/test-system.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES } from '../src/lib/roles.ts';

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

t.test('Grafana provisioning finds its data source: the dashboard has a DS_PROMETHEUS data-source variable', async (t) => {
  // A provisioned dashboard gets no __inputs substitution; the panels' ${DS_PROMETHEUS} resolves to this variable.
  const variable = dashboard.templating.list.find((v: { name: string }) => v.name === 'DS_PROMETHEUS');
  t.match(variable, { type: 'datasource', query: 'prometheus' });
  const provisioning = parse(readFileSync(new URL('./grafana/provisioning/datasources/portolan.yaml', import.meta.url), 'utf8'));
  t.match(provisioning.datasources, [{ type: 'prometheus', url: 'http://localhost:9090' }]);
  const providers = parse(readFileSync(new URL('./grafana/provisioning/dashboards/portolan.yaml', import.meta.url), 'utf8'));
  const compose = parse(readFileSync(new URL('./compose.yaml', import.meta.url), 'utf8'));
  const mounted = compose.services.grafana.volumes.find((v: string) => v.startsWith('./portolan.json:')).split(':')[1];
  t.equal(`${providers.providers[0].options.path}/portolan.json`, mounted, 'compose mounts the dashboard where the provider reads');
  t.ok(compose.services.prometheus.volumes.includes('./prometheus.yml:/etc/prometheus/prometheus.yml:ro'));
});

t.test('the Prometheus configuration scrapes one role of npm start, and that one /metrics covers every role', async (t) => {
  const config = parse(readFileSync(new URL('./prometheus.yml', import.meta.url), 'utf8'));
  const targets: string[] = config.scrape_configs.flatMap((job: { static_configs: { targets: string[] }[] }) => job.static_configs.flatMap((c) => c.targets));
  t.same(targets, [`localhost:${ROLE_DEFINITIONS.gateway.defaultPort}`], 'the gateway of npm start, once');
  const { system } = await startTestSystem(t, { config: { monitorIntervalMs: 50 } });
  for (const role of ROLE_NAMES) await fetch(`${system.url(role)}/no/such/path`).then((r) => r.arrayBuffer());
  const served = await (await fetch(`${system.url('gateway')}/metrics`)).text();
  for (const role of ROLE_NAMES) t.match(served, new RegExp(`^portolan_http_requests_total\\{role="${role}",`, 'm'), `the gateway's /metrics counts ${role}`);
  t.notMatch(served, /portolan_process_process_/, 'no doubled prefix');
  t.match(served, /^portolan_process_cpu_user_seconds_total /m, 'process metrics under portolan_');
});
