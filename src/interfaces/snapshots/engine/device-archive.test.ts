import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { TapTest } from '../../../lib/tap-test.ts';
import { readDeviceArchive } from './device-archive.ts';
import { evaluateSnapshot } from './evaluate.ts';
import { extractSnapshot } from './extract.ts';
import { loadRuleSetFile } from './rule-set.ts';
import { readSnapshotFolder } from './snapshot-content.ts';
import { rawTar } from './test-archive.ts';
import { DEVICE_DIR, deviceContent, deviceFiles, writeFiles } from './test-device-archives.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

async function tempDir(t: TapTest): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'portolan-device-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The fixture as a tar archive: names as `prefix` + path (`./`, a top-level folder), folders listed first as tar lists them. */
async function fixtureArchive(prefix: string): Promise<Buffer> {
  const files = await deviceFiles();
  const folders = [
    ...new Set(
      Object.keys(files).flatMap((path) =>
        path
          .split('/')
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
      ),
    ),
  ];
  return gzipSync(
    rawTar([
      ...(prefix ? [{ path: prefix, type: 'Directory' as const }] : []),
      ...folders.sort().map((path) => ({ path: `${prefix}${path}/`, type: 'Directory' as const })),
      ...Object.entries(files).map(([path, body]) => ({ path: `${prefix}${path}`, body })),
    ]),
  );
}

const SHAPES: [string, string][] = [
  ['a UCS (names at the root)', ''],
  ['names with a leading ./', './'],
  ['a qkview inside one top-level folder', 'qkview_lb1.example.net/'],
];
for (const [shape, prefix] of SHAPES) {
  t.test(`${shape}: unpacked, recognised as a device archive and read`, async (t) => {
    const dir = await tempDir(t);
    const archive = join(dir, 'upload.tgz');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(archive, await fixtureArchive(prefix));
    const extracted = await extractSnapshot(archive, join(dir, 'files'));
    if (!extracted.ok) return t.fail(extracted.message);
    t.match(extracted.manifest, {
      format: 'device-archive',
      version: '16.1.4',
      hostname: 'lb1.example.net',
      platform: 'BIG-IP Virtual Edition',
    });
    const read = await readSnapshotFolder(join(dir, 'files'), ruleSet.reads);
    if (!read.ok) return t.fail(read.message);
    t.ok(read.content.paths.includes('config/bigip.conf'), 'paths are relative to the archive root');
    t.same(
      read.content.collections?.pools?.map((p) => p.id),
      ['/Common/app_pool', '/Common/dns_pool', '/Web_Prod/App_1/web_pool'],
    );
    t.same(read.content.notes, []);
  });
}

t.test('an archive that is neither a Portolan snapshot nor a device archive is refused, saying so', async (t) => {
  const dir = await tempDir(t);
  const { writeFile } = await import('node:fs/promises');
  await writeFile(
    join(dir, 'a.tgz'),
    gzipSync(
      rawTar([
        { path: 'config/bigip.txt', body: 'x' },
        { path: 'var/log/ltm', body: 'y' },
      ]),
    ),
  );
  t.match(await extractSnapshot(join(dir, 'a.tgz'), join(dir, 'files')), {
    ok: false,
    message: /manifest\.json is missing at the root of the archive, and it is no device archive either \(config\/bigip\.conf/,
  });
});

t.test(
  'the software version: VERSION, else the device record, else the #TMSH-VERSION line, else none (and no version rule hits)',
  async (t) => {
    const noVersion = await deviceContent(ruleSet, { remove: ['VERSION'] });
    t.equal(noVersion.manifest.version, '16.1.4');
    t.match(noVersion.notes, [/^VERSION is missing: the software version 16\.1\.4 was taken from the device record \(cm device\)/]);

    const noDevice = await deviceContent(ruleSet, {
      remove: ['VERSION'],
      edit: (files) => {
        files['config/bigip_base.conf'] = files['config/bigip_base.conf']!.replace('    self-device true\n', '').replace(
          '#TMSH-VERSION: 16.1.4',
          '#TMSH-VERSION: 14.1.2.3',
        );
      },
    });
    t.equal(noDevice.manifest.version, '14.1.2.3');
    t.equal(noDevice.manifest.hostname, 'lb1.example.net', 'the host name from sys global-settings');
    t.equal(noDevice.manifest.chassisSerial, '');
    t.match(noDevice.notes, [/taken from the #TMSH-VERSION line of the configuration/]);

    const none = await deviceContent(ruleSet, {
      remove: ['VERSION'],
      edit: (files) => {
        for (const path of Object.keys(files))
          if (path.endsWith('.conf'))
            files[path] = files[path]!.replace(/#TMSH-VERSION: [\d.]+\n/, '').replace('    self-device true\n', '');
      },
    });
    t.equal(none.manifest.version, '');
    t.match(none.notes, ['VERSION is missing and no configuration file names the software version: the version rules did not run']);
    const output = evaluateSnapshot(ruleSet, none);
    const hit = (name: string) => output.diagnostics.diagnostic.find((d) => d.name === name)!.run_data.match;
    t.equal(hit('software-end-of-life'), false, 'an unknown version is not "before 15.1.0"');
    t.equal(hit('snapshot-read-partly'), true);
  },
);

t.test('only config/bigip_base.conf (no bigip.conf): still a device archive, its facts read', async (t) => {
  const content = await deviceContent(ruleSet, { remove: ['config/bigip.conf', 'config/bigip_script.conf'] });
  t.equal(content.manifest.hostname, 'lb1.example.net');
  t.same(
    content.collections?.pools?.map((p) => p.id),
    ['/Web_Prod/App_1/web_pool'],
  );
});

t.test('a configuration file past the read limit: its first bytes are read, the rest noted, unresolved pools count as found', async (t) => {
  const dir = await tempDir(t);
  const files = await deviceFiles();
  files['config/bigip.conf'] +=
    `ltm virtual /Common/late_vs {\n    destination /Common/10.9.9.9:80\n    pool /Common/defined_later\n}\n${'# padding\n'.repeat(2000)}ltm pool /Common/defined_later { }\n`;
  await writeFiles(dir, files);
  const content = await readDeviceArchive(dir, '', ruleSet.reads, {
    maxFileBytes: 4096,
    maxTotalBytes: 1 << 20,
    maxManifestBytes: 65536,
    maxConfigFileBytes: files['config/bigip.conf']!.length - 100,
  });
  t.match(content.notes, [/^config\/bigip\.conf is \d+ bytes: only its first \d+ bytes were read$/]);
  t.match(content.collections?.services?.find((s) => s.id === '/Common/late_vs')?.fields, {
    pool: '/Common/defined_later',
    poolFound: true,
  });
});

t.test(
  'the shapes of a public tool test tree: empty pools, FQDN members, monitor lists, APM expressions, scripts with lone quotes, dotted partitions',
  async (t) => {
    const dir = await tempDir(t);
    await mkdir(join(dir, 'config'), { recursive: true });
    await writeFiles(dir, {
      'config/bigip.conf': [
        '#TMSH-VERSION: 15.1.8.2',
        '',
        'apm policy policy-item /Common/login_act {',
        '    rules {',
        '        {',
        '            caption Successful',
        '            expression "expr {[mcget {session.localdb.last.result}] == 1}"',
        '            next-item /Common/login_end_allow',
        '        }',
        '    }',
        '}',
        'ltm pool /Common/manyOptions_pool {',
        '    members {',
        '        /Common/10.3.110.10:80 {',
        '            address 10.3.110.10',
        '        }',
        '        /Common/dw1.lab.io:8443 {',
        '            fqdn {',
        '                autopopulate enabled',
        '                name dude1.where.io',
        '            }',
        '        }',
        '    }',
        '    monitor min 2 of { /Common/gateway_icmp /Common/http /Common/http2 }',
        '}',
        'ltm pool /Common/css_pool { }',
        'ltm rule /Common/app4_pool_rule2 {',
        '',
        '}',
        'ltm virtual /Common/forwarder_net_0.0.0.0 {',
        '    destination /Common/0.0.0.0:0',
        '    ip-forward',
        '    mask any',
        '    profiles {',
        '        /Common/fastl4_loose { }',
        '    }',
        '}',
        'security dos profile /Common/app50_dos {',
        '    application {',
        '        app50_dos {',
        '            captcha-response {',
        '                failure {',
        '                    body "Please, try again.',
        '<br>',
        '<b>What code is in the image\\?</b>',
        '}"',
        '                }',
        '            }',
        '        }',
        '    }',
        '}',
        '',
      ].join('\n'),
      'config/bigip_script.conf': 'cli script /Common/__appsvcs_update {\nproc script::run {} {\nregsub -all {"} $err {\\"} err\n}\n}\n',
      'config/partitions/foo.a_1-c/bigip.conf':
        'ltm pool /foo.a_1-c/app/p {\n    members {\n        /foo.a_1-c/192.0.2.5:443 {\n            address 192.0.2.5\n        }\n    }\n}\n',
    });
    const read = await readSnapshotFolder(dir, ruleSet.reads);
    if (!read.ok) return t.fail(read.message);
    t.same(read.content.notes, [
      'VERSION is missing: the software version 15.1.8.2 was taken from the #TMSH-VERSION line of the configuration',
    ]);
    const output = evaluateSnapshot(ruleSet, read.content, 'hit');
    const lines = (name: string) => output.diagnostics.diagnostic.find((d) => d.name === name)?.output ?? [];
    t.same(lines('pool-without-members'), ['/Common/css_pool (memberCount 0)']);
    t.same(lines('script-empty'), ['/Common/app4_pool_rule2 (blank true)']);
    t.same(lines('service-on-any-address'), [], 'an ip-forward virtual routes: 0.0.0.0 is what it is for');
    t.same(lines('pool-member-documentation-address'), ['/foo.a_1-c/app/p 192.0.2.5:443 (address 192.0.2.5)']);
    t.same(lines('software-maintenance-only'), ['software version 15.1.8.2 (from 15.1.0 and before 16.1.0)']);
    t.match(read.content.collections?.pools?.find((p) => p.id === '/Common/manyOptions_pool')?.fields, {
      memberCount: 2,
      monitors: ['/Common/gateway_icmp', '/Common/http', '/Common/http2'],
    });
    t.same(
      read.content.collections?.tenants?.map((f) => f.id),
      ['/foo.a_1-c'],
    );
  },
);

t.test('the fixture folder itself is read as a device archive', async (t) => {
  const read = await readSnapshotFolder(DEVICE_DIR, ruleSet.reads);
  t.match(read, { ok: true, content: { manifest: { format: 'device-archive' } } });
});
