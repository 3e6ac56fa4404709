import t from 'tap';
import { evaluateSnapshot } from './evaluate.ts';
import { loadRuleSetFile } from './rule-set.ts';
import type { RuleSet } from './rule-types.ts';
import { all, baseConf, change, conf, db, deviceContent, rule, version, type DevicePatch } from './test-device-archives.ts';
import { lines } from './test-snapshots.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const ruleSet: RuleSet = loaded.ruleSet;

const virtual = (name: string, destination: string, profiles: string, extra = '') =>
  conf(
    `ltm virtual /Common/${name} {\n    destination /Common/${destination}\n    ip-protocol tcp\n    mask 255.255.255.255\n${extra}    profiles {\n${profiles
      .split(' ')
      .map((p) => `        /Common/${p} { }\n`)
      .join('')}    }\n    source 0.0.0.0/0\n}\n`,
  );
const folders = (count: number) => baseConf(Array.from({ length: count }, (_, i) => `sys folder /Web_Prod/App_extra_${i} { }\n`).join(''));
const ltmLog = (text: string): DevicePatch => ({ files: { 'var/log/ltm': text } });

/**
 * For each shipped rule that can apply to a device's configuration, logs and version: a change of the
 * device archive (fixtures/device-archive/, a UCS-like tree) that makes it hit, what its output must
 * say, and a near miss. The health rules reading command outputs (disk, memory, NTP, license, uptime)
 * read Portolan's `commands/` files, which a device archive does not hold (rules.test.ts covers them).
 */
const CASES: Record<string, { hit: DevicePatch; output: RegExp; miss: DevicePatch }> = {
  'pool-without-members': {
    hit: conf('ltm pool /Common/css_pool { }\n'),
    output: /^\/Common\/css_pool \(memberCount 0\)$/,
    miss: conf(
      'ltm pool /Common/css_pool {\n    members {\n        /Common/css_node:80 {\n            fqdn {\n                name css.example.net\n            }\n        }\n    }\n}\n',
    ),
  },
  'pool-without-monitor': {
    hit: change('config/bigip.conf', '    monitor /Common/http and /Common/app_monitor\n', ''),
    output: /^\/Common\/app_pool \(monitorCount 0, memberCount 2\)$/,
    miss: change('config/bigip.conf', '    monitor /Common/http and /Common/app_monitor\n', '    monitor /Common/tcp\n'),
  },
  'pool-single-member': {
    hit: change('config/bigip.conf', '        /Common/app_node2:8080 { }\n', ''),
    output: /^\/Common\/app_pool \(memberCount 1\)$/,
    miss: change(
      'config/bigip.conf',
      '        /Common/app_node2:8080 { }\n',
      '        /Common/app_node2:8080 { } /Common/app_node3:8080 { }\n',
    ),
  },
  'pool-member-documentation-address': {
    // The member names the node; the node's address is in the documentation range.
    hit: change('config/bigip.conf', '    address 10.0.5.22\n', '    address 198.51.100.22%2\n'),
    output: /^\/Common\/app_pool 198\.51\.100\.22%2:8080 \(address 198\.51\.100\.22%2\)$/,
    miss: change('config/bigip.conf', '    address 10.0.5.22\n', '    address 198.51.101.22%2\n'),
  },
  'service-pool-not-found': {
    hit: change('config/bigip.conf', '    pool /Common/app_pool\n', '    pool /Common/gone_pool\n'),
    output: /^\/Common\/app_https_vs \(pool \/Common\/gone_pool, poolFound false\)$/,
    miss: change('config/bigip.conf', '    pool /Common/app_pool\n', '    pool /Web_Prod/App_1/web_pool\n'),
  },
  'http-service-without-tls': {
    hit: virtual('plain_vs', '10.0.4.10:80', 'http tcp'),
    output: /^\/Common\/plain_vs \(tls false, virtualPort 80, redirectOnly false\)$/,
    miss: virtual('plain_vs', '10.0.4.10:80', 'app_clientssl http tcp'),
  },
  'service-on-any-address': {
    hit: virtual('forward_vs', '0.0.0.0:any', 'fastL4'),
    output: /^\/Common\/forward_vs \(virtualAddresses 0\.0\.0\.0, class Service_TCP\)$/,
    miss: virtual('forward_vs', '0.0.0.1:any', 'fastL4'),
  },
  'duplicate-virtual-address': {
    hit: change('config/bigip.conf', '    ip-protocol udp\n', '    ip-protocol tcp\n'),
    output: /^10\.0\.4\.53:53 \(serviceCount 2\)$/,
    // The same address and port over UDP and TCP: two listeners.
    miss: {},
  },
  'tenant-many-applications': {
    hit: folders(50),
    output: /^\/Web_Prod \(applicationCount 51\)$/,
    miss: folders(49),
  },
  'monitor-interval-not-below-timeout': {
    // Inherited: the interval comes from the parent monitor (defaults-from).
    hit: conf('ltm monitor http /Common/child_monitor {\n    defaults-from /Common/app_monitor\n    timeout 10\n}\n'),
    output: /^\/Common\/child_monitor \(interval 10, timeout 10\)$/,
    miss: conf('ltm monitor http /Common/child_monitor {\n    defaults-from /Common/app_monitor\n    timeout 11\n}\n'),
  },
  'script-empty': {
    hit: rule('app4_pool_rule2', '\n# nothing yet\n'),
    output: /^\/Common\/app4_pool_rule2 \(blank true\)$/,
    miss: rule('app4_pool_rule2', 'when HTTP_REQUEST {\n    pool /Common/app_pool\n}'),
  },
  'script-deprecated-commands': {
    hit: rule('allow_list', 'when CLIENT_ACCEPTED {\n  if { ![matchclass [IP::client_addr] equals allowed] } { reject }\n}'),
    output: /^ltm rule \/Common\/allow_list \(config\/bigip\.conf\): 1 matching line, first at line 2: if \{ !\[matchclass/,
    miss: rule('allow_list', 'when CLIENT_ACCEPTED {\n  if { ![class match [IP::client_addr] equals allowed] } { reject }\n}'),
  },
  'script-global-variables': {
    hit: rule('counter', 'when RULE_INIT {\n  set ::hits 0\n}\nwhen HTTP_REQUEST {\n  incr ::hits\n}'),
    output: /^ltm rule \/Common\/counter \(config\/bigip\.conf\): 1 matching line, first at line 2: set ::hits 0$/,
    miss: rule('counter', 'when RULE_INIT {\n  set static::hits 0\n}'),
  },
  'script-logs-every-request': {
    hit: rule('trace', 'when HTTP_REQUEST {\n    log local0. "request [HTTP::uri]"\n}'),
    output: /^\/Common\/trace$/,
    miss: rule('trace', 'when CLIENT_ACCEPTED {\n    log local0. "client [IP::client_addr]"\n}'),
  },
  'scripted-token-parsing-unverified': {
    hit: all(
      version('13.0.1'),
      rule('oidc', 'when ACCESS_POLICY_AGENT_EVENT {\n  set claims [b64decode [lindex [split $id_token .] 1]]\n}'),
    ),
    output: /^ltm rule \/Common\/oidc \(config\/bigip\.conf\): 1 matching line/,
    miss: all(
      version('13.1.0'),
      rule('oidc', 'when ACCESS_POLICY_AGENT_EVENT {\n  set claims [b64decode [lindex [split $id_token .] 1]]\n}'),
    ),
  },
  'db-access-log-verbose': {
    hit: change('config/bigip_base.conf', 'value "notice"', 'value "debug"'),
    output: /^config\/db-variables\.json \(the sys db values of the configuration\): log\.access\.level is "debug"$/,
    miss: change('config/bigip_base.conf', 'value "notice"', 'value "warning"'),
  },
  'db-data-plane-log-verbose': {
    hit: db('dataplane.quic.log.level', 'Info'),
    output: /dataplane\.quic\.log\.level is "Info"/,
    miss: db('dataplane.quic.log.level', 'Notice'),
  },
  'db-qlogging-enabled': {
    hit: db('quic.qlogging', 'enable'),
    output: /quic\.qlogging is "enable"/,
    miss: db('quic.qlogging', 'disable'),
  },
  'quic-settings-on-experimental-release': {
    hit: all(version('16.0.2'), db('dataplane.quic.log.level', 'Error')),
    output: /dataplane\.quic\.log\.level is "Error"/,
    miss: all(version('16.1.0'), db('dataplane.quic.log.level', 'Error')),
  },
  'software-end-of-life': {
    hit: version('14.1.5'),
    output: /^software version 14\.1\.5 \(before 15\.1\.0\)$/,
    miss: version('15.1.0'),
  },
  'software-maintenance-only': {
    hit: version('15.1.10.2'),
    output: /^software version 15\.1\.10\.2 \(from 15\.1\.0 and before 16\.1\.0\)$/,
    miss: version('16.1'),
  },
  'log-error-rate': {
    hit: ltmLog(lines(100, (i) => `Nov  2 09:2${i % 10}:00 lb1 err mcpd[5231]: 01070734:3: Configuration error`)),
    output: /^var\/log\/ltm: 100 matching lines, first at line 1:/,
    miss: ltmLog(
      lines(99, () => 'Nov  2 09:20:00 lb1 err mcpd[5231]: 01070734:3: x') + lines(20, () => 'Nov  2 09:20:00 lb1 warning tmm: y'),
    ),
  },
  'requests-failed-members-down': {
    hit: ltmLog(
      lines(
        5,
        () => 'Nov  2 09:20:00 lb1 notice mcpd[5231]: 01070638:5: Pool /Common/app_pool member /Common/app_node1:8080 monitor status down.',
      ),
    ),
    output: /^var\/log\/ltm: 5 matching lines/,
    miss: ltmLog(
      lines(
        4,
        () => 'Nov  2 09:20:00 lb1 notice mcpd[5231]: 01070638:5: Pool /Common/app_pool member /Common/app_node1:8080 monitor status down.',
      ),
    ),
  },
  'core-files-present': {
    hit: { files: { 'var/core/tmm.lb1.bld0.0.1.core.gz': '' } },
    output: /^var\/core\/tmm\.lb1\.bld0\.0\.1\.core\.gz is present$/,
    miss: { files: { 'var/log/core-report': 'no cores\n' } },
  },
  'health-commands-missing': {
    hit: {},
    output: /^commands\/df\.txt is missing$/,
    miss: {
      files: {
        'commands/df.txt': 'Filesystem 1024-blocks Used Available Capacity Mounted on\n',
        'commands/memory.txt': 'Mem: 1 1 1 1 1 1\n',
      },
    },
  },
  'snapshot-read-partly': {
    hit: { remove: ['VERSION'] },
    output: /^VERSION is missing: the software version 16\.1\.4 was taken from the device record \(cm device\) of the configuration$/,
    miss: {},
  },
};

/** Rules a device archive cannot make hit, and why (each is shown to miss on it below). */
const NOT_APPLICABLE: Record<string, string> = {
  'declaration-missing': 'a device archive always has its configuration files',
  'disk-usage-high': 'reads commands/df.txt',
  'disk-full': 'reads commands/df.txt',
  'memory-pressure': 'reads commands/memory.txt',
  'swap-in-use': 'reads commands/memory.txt',
  'ntp-not-synchronised': 'reads commands/ntp.txt',
  'clock-skew': 'reads commands/ntp.txt',
  'license-expiring': 'reads commands/license.txt',
  'license-expired': 'reads commands/license.txt',
  'uptime-over-a-year': 'reads commands/uptime.txt',
};

const diagnosticOf = async (patch: DevicePatch, name: string) =>
  evaluateSnapshot(ruleSet, await deviceContent(ruleSet, patch)).diagnostics.diagnostic.find((d) => d.name === name)!;

t.test('every shipped rule has a device-archive hit and near miss here, or a reason it cannot apply', async (t) => {
  t.same([...Object.keys(CASES), ...Object.keys(NOT_APPLICABLE)].sort(), ruleSet.rules.map((r) => r.name).sort());
});

t.test('on the device archive as it is, only the missing command outputs hit', async (t) => {
  const output = evaluateSnapshot(ruleSet, await deviceContent(ruleSet));
  t.same(
    output.diagnostics.diagnostic.filter((d) => d.run_data.match).map((d) => d.name),
    ['health-commands-missing'],
  );
  t.same(output.system_information, {
    hostname: 'lb1.example.net',
    chassis_serial: '4216a7c2-55d0-11ee-8c99-0242ac120002',
    platform: 'BIG-IP Virtual Edition',
  });
});

for (const [name, { hit, output, miss }] of Object.entries(CASES)) {
  t.test(`${name}: hits on a device archive, naming the object`, async (t) => {
    const diagnostic = await diagnosticOf(hit, name);
    t.equal(diagnostic.run_data.match, true);
    t.ok(
      diagnostic.output.some((line) => output.test(line)),
      `an output line matches ${output}: ${JSON.stringify(diagnostic.output)}`,
    );
  });
  t.test(`${name}: misses on a near miss`, async (t) => {
    const diagnostic = await diagnosticOf(miss, name);
    t.equal(diagnostic.run_data.match, false);
    t.same(diagnostic.output, []);
  });
}

for (const [name, reason] of Object.entries(NOT_APPLICABLE)) {
  t.test(`${name}: misses on a device archive (${reason})`, async (t) => {
    t.equal((await diagnosticOf({}, name)).run_data.match, false);
  });
}

/** Shapes of real configurations the service rules must not call findings (each next to one they must). */
const REAL_SHAPES: { shape: string; name: string; patch: DevicePatch; hits: boolean }[] = [
  {
    shape: 'a port-80 virtual whose only iRule is the built-in redirect to HTTPS (it serves no plain HTTP)',
    name: 'http-service-without-tls',
    patch: virtual('to_https_vs', '10.0.4.10:80', 'http tcp', '    rules {\n        /Common/_sys_https_redirect\n    }\n'),
    hits: false,
  },
  {
    shape: 'the redirect next to an iRule of its own, with a pool: it may serve plain HTTP',
    name: 'http-service-without-tls',
    patch: all(
      rule('shop_rule', 'when HTTP_REQUEST {\n    pool shop_pool\n}'),
      virtual(
        'shop_vs',
        '10.0.4.10:80',
        'http tcp',
        '    pool /Common/app_pool\n    rules {\n        /Common/_sys_https_redirect\n        /Common/shop_rule\n    }\n',
      ),
    ),
    hits: true,
  },
  {
    shape: 'an IP forwarding virtual on 0.0.0.0 (a router: every address is what it is for)',
    name: 'service-on-any-address',
    patch: virtual('route_all_vs', '0.0.0.0:any', 'fastL4', '    ip-forward\n'),
    hits: false,
  },
  {
    shape: 'a virtual on the IPv6 wildcard as tmsh writes it (any6.443)',
    name: 'service-on-any-address',
    patch: virtual('v6_any_vs', 'any6.443', 'http tcp'),
    hits: true,
  },
  {
    shape: 'a virtual on the wildcard of a route domain (any%3:8443)',
    name: 'service-on-any-address',
    patch: virtual('v4_any_rd_vs', 'any%3:8443', 'http tcp'),
    hits: true,
  },
  {
    shape: 'an L2 forwarding virtual on ::',
    name: 'service-on-any-address',
    patch: virtual('bridge_vs', 'any6.any', 'fastL4', '    l2-forward\n'),
    hits: false,
  },
];
for (const { shape, name, patch, hits } of REAL_SHAPES) {
  t.test(`${name} ${hits ? 'hits' : 'misses'}: ${shape}`, async (t) => {
    t.equal((await diagnosticOf(patch, name)).run_data.match, hits);
  });
}

t.test('a forwarding virtual is a service of class Service_Forwarding; a redirect-only one is redirectOnly', async (t) => {
  const content = await deviceContent(
    ruleSet,
    all(
      virtual('route_all_vs', '0.0.0.0:any', 'fastL4', '    ip-forward\n'),
      virtual('to_https_vs', '10.0.4.10:80', 'http tcp', '    rules {\n        /Common/_sys_https_redirect\n    }\n'),
    ),
  );
  const service = (id: string) => content.collections?.services?.find((s) => s.id === id)?.fields;
  t.match(service('/Common/route_all_vs'), { class: 'Service_Forwarding', virtualAddresses: ['0.0.0.0'], redirectOnly: false });
  t.match(service('/Common/to_https_vs'), { class: 'Service_HTTP', redirectOnly: true, tls: false, virtualPort: 80 });
});

t.test('wildcard destinations as tmsh writes them: any6.<port> is IPv6, a route domain is kept', async (t) => {
  const content = await deviceContent(
    ruleSet,
    all(
      virtual('v6_any_vs', 'any6.443', 'http tcp'),
      virtual('v4_any_rd_vs', 'any%3:8443', 'http tcp'),
      virtual('v6_rd_vs', 'any6%3.80', 'http tcp'),
    ),
  );
  const listeners = content.collections?.listeners?.map((l) => l.id) ?? [];
  for (const id of [':::443', '0.0.0.0%3:8443', '::%3:80']) t.ok(listeners.includes(id), `listener ${id} in ${JSON.stringify(listeners)}`);
});
