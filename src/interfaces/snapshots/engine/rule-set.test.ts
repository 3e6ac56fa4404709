import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { compileGlob } from './glob.ts';
import { loadRuleSetFile, parseRuleSet } from './rule-set.ts';
import { compileRegex } from '../../../lib/safe-regex.ts';

const rule = (overrides: Record<string, unknown> = {}) => ({
  name: 'pool-without-members',
  importance: 'high',
  header: 'A pool has no members',
  summary: 'It cannot serve.',
  action: 'Add members.',
  solutions: ['https://support.example.com/kb/x'],
  match: { each: { in: 'pools', where: { field: 'memberCount', eq: 0 } } },
  ...overrides,
});
const ruleSet = (...rules: unknown[]) => ({ version: '2026.11.1', rules });
const withMatch = (match: unknown) => ruleSet(rule({ match }));

t.test('the shipped rule file loads', async (t) => {
  const loaded = await loadRuleSetFile();
  t.ok(loaded.ok, loaded.ok ? 'loaded' : loaded.message);
  if (loaded.ok) t.equal(loaded.ruleSet.version, '2026.12.2');
});

t.test('a minimal rule set loads, frozen, and reads the files its rules name', async (t) => {
  const loaded = parseRuleSet(
    ruleSet(rule(), rule({ name: 'df', match: { extract: { files: 'commands/df.txt', regex: '(?<use>\\d+)%', value: 'use', gt: 90 } } })),
  );
  t.ok(loaded.ok);
  if (!loaded.ok) return;
  t.ok(Object.isFrozen(loaded.ruleSet) && Object.isFrozen(loaded.ruleSet.rules[0]));
  t.ok(loaded.ruleSet.reads('config/declarations.json'), 'the source of pools');
  t.ok(loaded.ruleSet.reads('commands/df.txt'));
  t.notOk(loaded.ruleSet.reads('logs/ltm.log'), 'no rule reads the logs');
});

/** Each invalid rule file, and the place and reason its message must give. */
const INVALID: [string, unknown, RegExp][] = [
  ['not an object', [], /rule set: must be an object/],
  ['no rules', { version: '2026.11.1', rules: [] }, /rules: must be a non-empty list/],
  ['a version that is not date-based', { version: '1.0', rules: [rule()] }, /version: must be a date-based version/],
  ['an unknown top-level key', { ...ruleSet(rule()), rulez: [] }, /rule set: unknown key "rulez"/],
  [
    'an invalid regex',
    withMatch({ pattern: { files: 'logs/*.log', regex: '(unclosed' } }),
    /rules\[0\] \(pool-without-members\)\.match\.pattern\.regex: "\(unclosed" is not a valid regular expression \(.*Unterminated group/,
  ],
  [
    'a nested quantifier',
    withMatch({ pattern: { files: 'logs/*.log', regex: '^(a+)+$' } }),
    /pattern\.regex: .*repeats a group that holds a quantifier/,
  ],
  [
    'a repeated alternation',
    withMatch({ pattern: { files: 'logs/*.log', regex: '(?:ab|a)*c' } }),
    /repeats a group that holds a quantifier or an alternation/,
  ],
  ['a back-reference', withMatch({ pattern: { files: 'logs/*.log', regex: '(a)\\1' } }), /uses a back-reference/],
  ['unknown regex flags', withMatch({ pattern: { files: 'logs/*.log', regex: 'a', flags: 'g' } }), /flags must be "" or "i"/],
  [
    'an invalid regex inside a field test',
    withMatch({ each: { in: 'scripts', where: { field: 'text', matches: '[' } } }),
    /match\.each\.where\.matches: "\[" is not a valid regular expression/,
  ],
  ['two rules with one name', ruleSet(rule(), rule()), /rules\[1\] \(pool-without-members\)\.name: is used by an earlier rule/],
  ['a name that is not kebab-case', ruleSet(rule({ name: 'Pool Members' })), /\.name: must be lower-case words joined by hyphens/],
  ['an unknown importance', ruleSet(rule({ importance: 'severe' })), /\.importance: must be one of low, medium, high, critical/],
  [
    'a solution that is not https',
    ruleSet(rule({ solutions: ['http://support.example.com/x'] })),
    /\.solutions: must be a non-empty list of https URLs/,
  ],
  ['a malformed CVE id', ruleSet(rule({ cves: ['CVE-24-1'] })), /\.cves: must be a list of CVE ids/],
  ['a missing header', ruleSet(rule({ header: undefined })), /"header" is required/],
  ['an unknown key in a rule', ruleSet(rule({ severity: 'high' })), /rules\[0\] \(pool-without-members\): unknown key "severity"/],
  ['two kinds in one condition', withMatch({ present: 'a', missing: 'b' }), /\.match: must have exactly one of/],
  ['an unknown condition', withMatch({ regex: 'a' }), /\.match: unknown key "regex"/],
  ['an empty all', withMatch({ all: [] }), /\.match\.all: must be a non-empty list of conditions/],
  [
    'a problem deep in all/any/not',
    withMatch({ all: [{ present: 'a' }, { not: { any: [{ version: { before: 'x' } }] } }] }),
    /\.match\.all\[1\]\.not\.any\[0\]\.version\.before: must be a version like 16\.1\.0/,
  ],
  ['a version range with no bound', withMatch({ version: {} }), /version: needs "from", "before" or both/],
  ['a glob leaving the snapshot', withMatch({ present: '../etc/passwd' }), /\.match\.present: must be a relative path/],
  ['an unknown collection', withMatch({ each: { in: 'virtuals' } }), /each\.in: must be one of tenants, applications/],
  [
    'an unknown field',
    withMatch({ each: { in: 'pools', where: { field: 'members', eq: 0 } } }),
    /where\.field: must be a field of pools \(id, tenant, application, name, memberCount/,
  ],
  [
    'a field test with no comparison',
    withMatch({ each: { in: 'pools', where: { field: 'memberCount' } } }),
    /where: needs at least one comparison/,
  ],
  [
    'a number comparison with a string',
    withMatch({ each: { in: 'pools', where: { field: 'memberCount', gt: '5' } } }),
    /where\.gt: must be a number/,
  ],
  [
    'a field reference outside each',
    withMatch({ json: { file: 'config/db-variables.json', key: ['a'], eq: { field: 'b' } } }),
    /json\.eq: can name another field only inside "each"/,
  ],
  [
    'a reference to an unknown field',
    withMatch({ each: { in: 'monitors', where: { field: 'interval', gte: { field: 'timout' } } } }),
    /where\.gte\.field: must be one of id, tenant/,
  ],
  [
    'a json file with wildcards',
    withMatch({ json: { file: 'config/*.json', key: ['a'], eq: 1 } }),
    /json\.file: must be a file path without wildcards/,
  ],
  [
    'an extract naming a missing group',
    withMatch({ extract: { files: 'commands/df.txt', regex: '(?<use>\\d+)%', value: 'usage', gt: 1 } }),
    /extract\.value: must name a group of the regex \(use\)/,
  ],
  [
    'an extract with an unknown unit',
    withMatch({ extract: { files: 'commands/df.txt', regex: '(?<use>\\d+)', value: 'use', as: 'hours', gt: 1 } }),
    /extract\.as: must be "number" or "days-after-snapshot"/,
  ],
  [
    'an address range that is not one',
    withMatch({ each: { in: 'members', where: { field: 'address', inCidr: ['192.0.2.0/33'] } } }),
    /inCidr: "192\.0\.2\.0\/33" is not an address range/,
  ],
];

t.test('an invalid rule file is refused whole, with the place and the reason', async (t) => {
  for (const [name, value, message] of INVALID) {
    const loaded = parseRuleSet(value);
    t.equal(loaded.ok, false, `${name}: refused`);
    if (!loaded.ok) t.match(loaded.message, message, name);
  }
});

t.test('every problem of a file is listed at once, at most 20', async (t) => {
  const loaded = parseRuleSet(ruleSet(...Array.from({ length: 30 }, (_, i) => rule({ name: `rule-${i}`, importance: 'severe' }))));
  t.equal(loaded.ok, false);
  if (loaded.ok) return;
  t.equal(loaded.message.split('\n').filter((line) => line.startsWith('- rules[')).length, 20);
  t.match(loaded.message, /- \.\.\. and 10 more$/);
});

t.test('a rule file that cannot be read or parsed names its path', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'portolan-rules-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'broken.json'), '{"version": ');
  await writeFile(join(dir, 'invalid.json'), JSON.stringify(ruleSet(rule({ importance: 'x' }))));
  t.match(await loadRuleSetFile(join(dir, 'broken.json')), { ok: false, message: /broken\.json cannot be read: .*JSON/ });
  t.match(await loadRuleSetFile(join(dir, 'missing.json')), { ok: false, message: /missing\.json cannot be read: ENOENT/ });
  t.match(await loadRuleSetFile(join(dir, 'invalid.json')), {
    ok: false,
    message: /invalid\.json: the rule set is invalid:\n- rules\[0\]/,
  });
});

t.test('regexes: ordinary patterns compile, backtracking traps are refused', async (t) => {
  for (const safe of [
    '^\\*',
    '(?<use>\\d+)%\\s+(?<mount>\\S+)',
    '"level":\\s*(?:50|60)\\b|\\serr\\s',
    '(?<![:\\w])(?:a|b)\\b',
    '(?:ab)+',
    '(?:a|b)?c',
    '[(+*]+',
    '\\(a+\\)+',
    '(?i:abc)+',
    'x{2}',
  ]) {
    t.type(compileRegex(safe), RegExp, safe);
  }
  for (const unsafe of ['(a+)+', '(a*)*b', '(?:a|ab)+', '((ab)*c)*', '(a+){2,}', '(a+){1,5}', '(?<x>a)\\k<x>']) {
    t.type(compileRegex(unsafe), 'string', unsafe);
  }
  t.match(compileRegex('a'.repeat(513)), /longer than 512/);
});

t.test('globs: * stays within a folder, ** crosses folders, nothing escapes', async (t) => {
  const logs = compileGlob('logs/*.log');
  if (typeof logs === 'string') return t.fail(logs);
  t.ok(logs.regex.test('logs/ltm.log'));
  t.notOk(logs.regex.test('logs/old/ltm.log'));
  t.notOk(logs.regex.test('logs/ltm.logx'));
  const deep = compileGlob('cores/**');
  t.ok(typeof deep !== 'string' && deep.regex.test('cores/a/b.core'));
  for (const bad of ['/etc/passwd', '../x', 'a/./b', 'a b', 'a\\b', '']) t.type(compileGlob(bad), 'string', JSON.stringify(bad));
});
