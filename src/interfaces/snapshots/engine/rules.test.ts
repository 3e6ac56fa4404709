import t from 'tap';
import { evaluateSnapshot } from './evaluate.ts';
import { loadRuleSetFile } from './rule-set.ts';
import type { RuleSet } from './rule-types.ts';
import { both, declaration, dbVariables, lines, patched, replace, script, type Patch } from './test-snapshots.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const ruleSet: RuleSet = loaded.ruleSet;

/** For each shipped rule: a change that makes it hit (and what its output must say), and a near miss. */
const CASES: Record<string, { hit: Patch; output: RegExp; miss: Patch }> = {
  'pool-without-members': {
    hit: declaration((app) => (app.web_pool.members = [])),
    output: /^\/Web_Prod\/App_1\/web_pool \(memberCount 0\)$/,
    miss: declaration(
      (app) =>
        (app.web_pool.members = [
          { servicePort: 80, serverAddresses: [] },
          { servicePort: 81, serverAddresses: ['10.0.3.23'] },
        ]),
    ),
  },
  'pool-without-monitor': {
    hit: declaration((app) => delete app.api_pool.monitors),
    output: /^\/Web_Prod\/App_1\/api_pool \(monitorCount 0, memberCount 2\)$/,
    miss: declaration((app) => Object.assign(app.api_pool, { monitors: [], members: [] })),
  },
  'pool-single-member': {
    hit: declaration((app) => (app.web_pool.members[0].serverAddresses = ['10.0.3.21'])),
    output: /web_pool \(memberCount 1\)/,
    miss: declaration((app) => (app.web_pool.members = [])),
  },
  'pool-member-documentation-address': {
    hit: declaration((app) => (app.api_pool.members[0].serverAddresses = ['10.0.3.31', '2001:db8::5%2'])),
    output: /^\/Web_Prod\/App_1\/api_pool 2001:db8::5%2:8080 \(address 2001:db8::5%2\)$/,
    miss: declaration((app) => (app.api_pool.members[0].serverAddresses = ['192.0.3.10', '198.51.101.1', '2001:db9::1'])),
  },
  'service-pool-not-found': {
    hit: declaration((app) => (app.api_service.pool = 'missing_pool')),
    output: /api_service \(pool missing_pool, poolFound false\)/,
    miss: declaration((app) => (app.api_service.pool = '/Web_Prod/App_1/web_pool')),
  },
  'http-service-without-tls': {
    hit: declaration((app) => delete app.api_service.virtualPort),
    output: /api_service \(tls false, virtualPort 80, redirectOnly false\)/,
    miss: declaration((app) => (app.web_service.virtualPort = 80)),
  },
  'service-on-any-address': {
    hit: declaration((app) => (app.api_service.virtualAddresses = ['0.0.0.0'])),
    output: /api_service \(virtualAddresses 0\.0\.0\.0, class Service_HTTP\)/,
    miss: declaration((app) => (app.api_service.virtualAddresses = ['10.0.0.0'])),
  },
  'duplicate-virtual-address': {
    hit: declaration((app) => Object.assign(app.api_service, { virtualAddresses: ['10.0.3.10'], virtualPort: 443 })),
    output: /^10\.0\.3\.10:443 \(serviceCount 2\)$/,
    miss: declaration((app) => (app.api_service.virtualAddresses = ['10.0.3.10'])),
  },
  'tenant-many-applications': {
    hit: declaration((_, adc) => addApplications(adc, 50)),
    output: /^\/Web_Prod \(applicationCount 51\)$/,
    miss: declaration((_, adc) => addApplications(adc, 49)),
  },
  'monitor-interval-not-below-timeout': {
    hit: declaration((app) => (app.api_monitor.interval = 16)),
    output: /api_monitor \(interval 16, timeout 16\)/,
    miss: declaration((app) => (app.api_monitor.interval = 15)),
  },
  'declaration-missing': {
    hit: { remove: ['config/declarations.json'] },
    output: /^config\/declarations\.json is missing$/,
    miss: declaration((app) => delete app.api_service),
  },
  'script-empty': {
    hit: script('placeholder', '# TODO: block bad bots\n\n   \n'),
    output: /^\/Common\/placeholder \(blank true\)$/,
    miss: script('placeholder', '# TODO: block bad bots\nwhen HTTP_REQUEST { pool api_pool }\n'),
  },
  'script-deprecated-commands': {
    hit: script('allow_list', 'when CLIENT_ACCEPTED {\n  if { ![matchclass [IP::client_addr] equals allowed] } { reject }\n}\n'),
    output: /^config\/rules\/Common~allow_list\.tcl: 1 matching line, first at line 2: if \{ !\[matchclass/,
    miss: script('allow_list', 'when CLIENT_ACCEPTED {\n  if { ![class match [IP::client_addr] equals allowed] } { reject }\n}\n'),
  },
  'script-global-variables': {
    hit: script('counter', 'when RULE_INIT {\n  set ::hits 0\n}\nwhen HTTP_REQUEST {\n  incr ::hits\n  log local0. "hits $::hits"\n}\n'),
    output: /Common~counter\.tcl: 2 matching lines, first at line 2: set ::hits 0/,
    miss: script(
      'counter',
      'when RULE_INIT {\n  set static::limit 10\n}\nwhen HTTP_REQUEST {\n  if { $static::limit > 5 } { pool api_pool }\n}\n',
    ),
  },
  'script-logs-every-request': {
    hit: script('trace', 'when HTTP_REQUEST {\n    log local0. "request [HTTP::uri]"\n}\n'),
    output: /^\/Common\/trace$/,
    // The healthy script has HTTP_REQUEST without logging; this one logs, but not per request.
    miss: script('trace', 'when CLIENT_ACCEPTED {\n    log local0. "client [IP::client_addr]"\n}\n'),
  },
  'scripted-token-parsing-unverified': {
    hit: both(
      { manifest: { version: '13.0.1' } },
      script('oidc', 'when ACCESS_POLICY_AGENT_EVENT {\n  set claims [b64decode [lindex [split $id_token .] 1]]\n}\n'),
    ),
    output: /software version 13\.0\.1 \(before 13\.1\.0\)/,
    miss: both(
      { manifest: { version: '13.1.0' } },
      script('oidc', 'when ACCESS_POLICY_AGENT_EVENT {\n  set claims [b64decode [lindex [split $id_token .] 1]]\n}\n'),
    ),
  },
  'db-access-log-verbose': {
    hit: dbVariables({ 'log.access.level': 'debug' }),
    output: /^config\/db-variables\.json: log\.access\.level is "debug"$/,
    miss: dbVariables({ 'log.access.level': 'warning' }),
  },
  'db-data-plane-log-verbose': {
    hit: dbVariables({ 'dataplane.quic.log.level': 'Info' }),
    output: /dataplane\.quic\.log\.level is "Info"/,
    miss: dbVariables({ 'dataplane.quic.log.level': 'Notice' }),
  },
  'db-qlogging-enabled': {
    hit: dbVariables({ 'quic.qlogging': 'enable' }),
    output: /quic\.qlogging is "enable"/,
    miss: { remove: ['config/db-variables.json'] },
  },
  'quic-settings-on-experimental-release': {
    hit: both({ manifest: { version: '16.0.2' } }, dbVariables({ 'dataplane.quic.log.level': 'Error' })),
    output: /dataplane\.quic\.log\.level is "Error"/,
    miss: both({ manifest: { version: '16.1.0' } }, dbVariables({ 'quic.qlogging': 'enable' })),
  },
  'software-end-of-life': {
    hit: { manifest: { version: '14.1.5' } },
    output: /^software version 14\.1\.5 \(before 15\.1\.0\)$/,
    miss: { manifest: { version: '15.1.0' } },
  },
  'software-maintenance-only': {
    hit: { manifest: { version: '15.1.10.2' } },
    output: /software version 15\.1\.10\.2 \(from 15\.1\.0 and before 16\.1\.0\)/,
    miss: { manifest: { version: '16.1' } },
  },
  'disk-usage-high': {
    hit: replace('commands/df.txt', '62% /var', '93% /var'),
    output: /^commands\/df\.txt: \/var: 93$/,
    miss: replace('commands/df.txt', '62% /var', '90% /var'),
  },
  'disk-full': {
    hit: replace('commands/df.txt', '44% /', '99% /'),
    output: /^commands\/df\.txt: \/: 99$/,
    miss: replace('commands/df.txt', '44% /', '97% /'),
  },
  'memory-pressure': {
    hit: replace('commands/memory.txt', '9500000', '1500000'),
    output: /^commands\/memory\.txt: 9\.2 % \(1500000 of 16303412\)$/,
    miss: replace('commands/memory.txt', '9500000', '1700000'),
  },
  'swap-in-use': {
    hit: replace('commands/memory.txt', '10000     4184300', '2000000     2194300'),
    output: /47\.7 %/,
    miss: replace('commands/memory.txt', '10000     4184300', '1000000     3194300'),
  },
  'log-error-rate': {
    // The healthy ltm.log already holds one error line.
    hit: {
      files: {
        'logs/app.log':
          lines(60, (i) => `Nov  2 09:2${i % 10}:00 device-1 err tmm[1021]: pool member failed`) +
          lines(39, () => '{"level":50,"msg":"request failed"}'),
      },
    },
    output: /^logs\/app\.log: 99 matching lines, first at line 1:/,
    miss: {
      files: {
        'logs/app.log': lines(98, () => 'Nov  2 09:20:00 device-1 err tmm[1021]: x') + lines(50, () => '{"level":40,"msg":"slow"}'),
      },
    },
  },
  'requests-failed-members-down': {
    hit: {
      files: {
        'logs/data-plane.log': lines(
          5,
          () => '{"level":50,"service":"/Web_Prod/App_1/api_service","status":502,"reason":"member_failed","msg":"request failed"}',
        ),
      },
    },
    output: /logs\/data-plane\.log: 5 matching lines/,
    miss: {
      files: {
        'logs/data-plane.log':
          lines(4, () => '{"level":50,"reason":"no_member","msg":"request failed"}') +
          lines(10, () => '{"level":30,"reason":"client_closed"}'),
      },
    },
  },
  'ntp-not-synchronised': {
    hit: replace('commands/ntp.txt', '*192.0.2.123', ' 192.0.2.123'),
    output: /^commands\/ntp\.txt is present$/,
    miss: { remove: ['commands/ntp.txt'] },
  },
  'clock-skew': {
    hit: replace('commands/ntp.txt', '0.153', '-1520.331'),
    output: /^commands\/ntp\.txt: 192\.0\.2\.123: 1520\.331$/,
    miss: replace('commands/ntp.txt', '0.153', '-999.900'),
  },
  'core-files-present': {
    hit: { files: { 'cores/tmm.1021.core.gz': '' } },
    output: /^cores\/tmm\.1021\.core\.gz is present$/,
    miss: { files: { 'logs/cores.log': 'no cores\n' } },
  },
  'license-expiring': {
    hit: replace('commands/license.txt', '2027/10/31', '2026/11/20'),
    output: /^commands\/license\.txt: 2026\/11\/20 \(18 days after the snapshot was taken\)$/,
    miss: replace('commands/license.txt', '2027/10/31', '2026/12/02'),
  },
  'license-expired': {
    hit: replace('commands/license.txt', '2027/10/31', '2026/11/01'),
    output: /2026\/11\/01 \(1 days before the snapshot was taken\)/,
    miss: replace('commands/license.txt', '2027/10/31', '2026/11/02'),
  },
  'uptime-over-a-year': {
    hit: replace('commands/uptime.txt', 'up 42 days', 'up 366 days'),
    output: /^commands\/uptime\.txt: 366$/,
    miss: replace('commands/uptime.txt', 'up 42 days', 'up 365 days'),
  },
  'health-commands-missing': {
    hit: { remove: ['commands/memory.txt'] },
    output: /^commands\/memory\.txt is missing$/,
    miss: { remove: ['commands/uptime.txt'] },
  },
  'snapshot-read-partly': {
    hit: { notes: ['config/bigip.conf is 40000000 bytes: only its first 33554432 bytes were read'] },
    output: /^config\/bigip\.conf is 40000000 bytes: only its first 33554432 bytes were read$/,
    miss: { notes: [] },
  },
};

function addApplications(adc: Record<string, any>, count: number) {
  for (let i = 0; i < count; i++) adc.Web_Prod[`App_extra_${i}`] = { class: 'Application', template: 'generic' };
}

const diagnosticOf = (patch: Patch, name: string) =>
  evaluateSnapshot(ruleSet, patched(patch)).diagnostics.diagnostic.find((d) => d.name === name)!;

t.test('the shipped rule set has at least 25 rules, each with a hit case and a near-miss case here', async (t) => {
  t.ok(ruleSet.rules.length >= 25, `${ruleSet.rules.length} rules`);
  t.same(Object.keys(CASES).sort(), ruleSet.rules.map((r) => r.name).sort());
});

t.test('the healthy snapshot hits no rule', async (t) => {
  const output = evaluateSnapshot(ruleSet, patched());
  t.same(
    output.diagnostics.diagnostic.filter((d) => d.run_data.match).map((d) => d.name),
    [],
  );
  t.equal(output.diagnostics.miss_count, ruleSet.rules.length);
});

for (const [name, { hit, output, miss }] of Object.entries(CASES)) {
  t.test(`${name}: hits, saying where`, async (t) => {
    const diagnostic = diagnosticOf(hit, name);
    t.equal(diagnostic.run_data.match, true);
    t.ok(
      diagnostic.output.some((line) => output.test(line)),
      `an output line matches ${output}: ${JSON.stringify(diagnostic.output)}`,
    );
  });
  t.test(`${name}: misses on a near miss`, async (t) => {
    const diagnostic = diagnosticOf(miss, name);
    t.equal(diagnostic.run_data.match, false);
    t.same(diagnostic.output, []);
  });
}

t.test('a declared port-80 service whose only iRule is the built-in redirect to HTTPS does not serve plain HTTP', async (t) => {
  const redirect = declaration((app) => {
    delete app.api_service.virtualPort;
    app.api_service.iRules = [{ bigip: '/Common/_sys_https_redirect' }];
  });
  t.equal(diagnosticOf(redirect, 'http-service-without-tls').run_data.match, false);
  const more = declaration((app) => {
    delete app.api_service.virtualPort;
    app.api_service.iRules = [{ bigip: '/Common/_sys_https_redirect' }, 'own_rule'];
  });
  t.equal(diagnosticOf(more, 'http-service-without-tls').run_data.match, true, 'with an iRule of its own next to it, it may');
});
