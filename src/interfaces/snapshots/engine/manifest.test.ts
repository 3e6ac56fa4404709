import t from 'tap';
import { validateManifest } from './manifest.ts';
import { checkEntryPath } from './entry-path.ts';
import { TEST_MANIFEST } from './test-archive.ts';

t.test('a complete manifest is accepted as given, frozen', async (t) => {
  const checked = validateManifest({ ...TEST_MANIFEST, version: '15.1.10.2', generatedAt: '2026-11-02T10:30:00.123+01:00' });
  t.match(checked, { ok: true, manifest: { version: '15.1.10.2' } });
  t.ok(checked.ok && Object.isFrozen(checked.manifest));
});

t.test('each wrong manifest is refused with a message naming the field and what it should be', async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', ['a'], /^manifest\.json: must be a JSON object$/],
    ['another format', { ...TEST_MANIFEST, format: 'portolan-snapshot/2' }, /format must be "portolan-snapshot\/1"/],
    ['no hostname', { ...TEST_MANIFEST, hostname: undefined }, /hostname is missing \(a host name/],
    ['a hostname with a space', { ...TEST_MANIFEST, hostname: 'device 1' }, /hostname must be a host name/],
    ['an empty serial', { ...TEST_MANIFEST, chassisSerial: '' }, /chassisSerial must be printable ASCII, 1 to 64 characters/],
    ['a platform with a newline', { ...TEST_MANIFEST, platform: 'a\nb' }, /platform must be printable ASCII/],
    [
      'a version with letters',
      { ...TEST_MANIFEST, version: '17.1.0-beta' },
      /version must be a software version of 2 to 4 dot-separated numbers/,
    ],
    ['a version number', { ...TEST_MANIFEST, version: 17 }, /version must be/],
    [
      'a date without a zone',
      { ...TEST_MANIFEST, generatedAt: '2026-11-02T09:30:00' },
      /generatedAt must be an ISO 8601 date-time with a zone/,
    ],
    ['a date that does not exist', { ...TEST_MANIFEST, generatedAt: '2026-13-45T09:30:00Z' }, /generatedAt is not a real date/],
    [
      'a snake_case field',
      { ...TEST_MANIFEST, chassis_serial: 'x' },
      /unknown field "chassis_serial" \(the fields are format, hostname, chassisSerial/,
    ],
  ];
  for (const [name, value, message] of cases) t.match(validateManifest(value), { ok: false, message }, name);
});

t.test('entry names: normalised when safe, refused with a reason otherwise', async (t) => {
  t.match(checkEntryPath('./config//rules/a.tcl', 16, 1024), { ok: true, path: 'config/rules/a.tcl', parts: ['config', 'rules', 'a.tcl'] });
  t.match(checkEntryPath('logs/', 16, 1024), { ok: true, path: 'logs' });
  t.match(checkEntryPath('./', 16, 1024), { ok: true, path: '' });
  const refused: [string, RegExp][] = [
    ['', /empty name/],
    ['/etc/passwd', /absolute path/],
    ['a/../../b', /'\.\.' component/],
    ['..', /'\.\.' component/],
    ['a\\b', /backslash/],
    ['C:/Windows', /drive letter/],
    ['c:x', /drive letter/],
    ['a\u0000b', /control characters/],
    ['a/b/c', /nested 3 levels deep \(at most 2\)/],
    ['x'.repeat(300), /component longer than 255/],
  ];
  for (const [name, reason] of refused)
    t.match(checkEntryPath(name, name === 'a/b/c' ? 2 : 16, 1024), { ok: false, reason }, JSON.stringify(name.slice(0, 20)));
  t.match(checkEntryPath('a'.repeat(20), 16, 10), { ok: false, reason: /longer than 10 characters/ });
});
