import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { findFreePorts } from '../src/lib/free-ports.ts';
import { startTestSystem } from '../src/app/test-system.ts';
import { ROLE_NAMES } from '../src/lib/roles.ts';
import { EXIT_STATUS, main } from './cli.ts';
import { createFetchClient } from './http.ts';
import { toJsonSummary } from './report-json.ts';
import { toJUnit } from './report-junit.ts';
import { toTap } from './report-tap.ts';
import { coverageLines, summaryLines } from './report-text.ts';
import { runConformance } from './run.ts';
import { parseTargets, withoutCredentials } from './targets.ts';

// A target URL may carry a user and password (http://u:pw@host): they are sent, never printed. A
// target URL that does not parse is a usage error naming the option, before anything is tried.

const SECRET = 'secretpw-7c31';

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--quiet'], { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), env: {} });
  return { code, stdout, stderr };
}

/** A port nothing listens on: bound, then released. */
const deadPort = async (): Promise<number> => (await findFreePorts(1))[0]!;

t.test('withoutCredentials leaves out the user and password, and nothing else', async (t) => {
  t.equal(withoutCredentials(`http://u:${SECRET}@127.0.0.1:1`), 'http://127.0.0.1:1');
  t.equal(
    withoutCredentials(`https://u:p@ss:${SECRET}@device.example:8443/x?a=b@c`),
    'https://device.example:8443/x?a=b@c',
    "up to the last '@' before the path, as URL parses it",
  );
  t.equal(
    withoutCredentials('http://host:8080/path?email=a@b.example'),
    'http://host:8080/path?email=a@b.example',
    "an '@' after the host is not a user",
  );
  t.equal(
    withoutCredentials(`fetch failed: http://u:${SECRET}@h:1/x and http://v:w@k:2`),
    'fetch failed: http://h:1/x and http://k:2',
    'every URL of a message',
  );
});

t.test('an unreachable target with a user and password: its line names the URL without them', async (t) => {
  const [a, b] = [await deadPort(), await deadPort()];
  const { code, stdout, stderr } = await run([
    '--target',
    `gateway=http://u:${SECRET}@127.0.0.1:${a}`,
    '--compare',
    `http://u:${SECRET}@127.0.0.1:${b}`,
  ]);
  t.equal(code, EXIT_STATUS.unreachable);
  t.same(stderr.trimEnd().split('\n'), [
    `cannot reach gateway at http://127.0.0.1:${a}: connection refused — is it running? (set with --target gateway=<url>)`,
    `cannot reach the target at http://127.0.0.1:${b}: connection refused — is it running? (set with --compare <url>)`,
  ]);
  t.notMatch(stdout + stderr, SECRET);
});

t.test('a target with a user and password: no report prints them (TAP, summary, differential, JSON, JUnit)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-target-urls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { system } = await startTestSystem(t, { config: { validateResponses: false } });
  const plain = system.url('gateway');
  const withUser = plain.replace('://', `://u:${SECRET}@`);
  const json = join(dir, 'out.json');
  const junit = join(dir, 'out.xml');
  const { stdout, stderr } = await run([
    '--target',
    withUser,
    '--compare',
    `rate-limit=${withUser}`,
    '--spec',
    'rate-limit',
    '--no-scenarios',
    '--fuzz-runs',
    '0',
    '--seed',
    '5',
    '--json',
    json,
    '--report',
    junit,
  ]);
  // The URL's role map names every role: each gets the user and password too, and none is printed.
  const roles = Object.fromEntries(ROLE_NAMES.map((role) => [role, system.url(role)]));
  const shown = Object.entries(roles)
    .map(([role, url]) => `${role}=${url}`)
    .join(' ');
  t.match(stdout, `# targets: ${shown}\n`, 'the TAP header names the URLs');
  t.match(stdout, `differential: A = ${shown}, B = rate-limit=${plain}:`, 'so does the differential report');
  t.match(stdout, /# compare target: (PASS|FAIL): /, 'the compare headline');
  const report = readFileSync(json, 'utf8');
  t.same(JSON.parse(report).targets, roles);
  t.same(JSON.parse(report).differential.targets, { 'rate-limit': plain });
  for (const [name, text] of Object.entries({ stdout, stderr, json: report, junit: readFileSync(junit, 'utf8') }))
    t.notMatch(text, SECRET, `${name}: no password`);
});

t.test('a transport error that quotes the URL (fetch refuses URLs with credentials) is printed without them', async (t) => {
  const { system } = await startTestSystem(t, { config: { validateResponses: false } });
  const withUser = system.url('gateway').replace('://', `://u:${SECRET}@`);
  const result = await runConformance({
    targets: { 'rate-limit': withUser },
    interfaces: ['rate-limit'],
    scenarios: [],
    fuzzRuns: 0,
    seed: 5,
    env: {},
    transport: createFetchClient,
  });
  const messages = result.operations
    .flatMap((o) => o.probes)
    .flatMap((p) => p.violations)
    .map((v) => v.message);
  t.ok(
    messages.some((m) => /no answer from http:\/\/127\.0\.0\.1:\d+: .*credentials/.test(m)),
    'the requests failed, and say why',
  );
  const printed = [
    toTap(result),
    toJUnit(result, []),
    JSON.stringify(toJsonSummary(result)),
    ...summaryLines(result),
    ...coverageLines(result),
  ].join('\n');
  t.notMatch(printed, SECRET);
});

t.test('a target URL that does not parse is a usage error naming --target or --compare', async (t) => {
  t.throws(() => parseTargets(['http://[::1:1']), { message: '--target http://[::1:1: not a valid URL' });
  t.throws(() => parseTargets(['gateway=http://[::1:1'], '--compare'), { message: '--compare gateway=http://[::1:1: not a valid URL' });
  t.throws(
    () => parseTargets([`http://u:${SECRET}@[::1:1`]),
    { message: '--target http://[::1:1: not a valid URL' },
    'without the password',
  );

  const target = await run(['--target', 'http://[::1:1']);
  t.equal(target.code, EXIT_STATUS.usage);
  t.equal(target.stderr, "portolan conformance: --target http://[::1:1: not a valid URL\nRun 'portolan conformance --help' for usage.\n");
  const compare = await run(['--target', `http://127.0.0.1:${await deadPort()}`, '--compare', 'device=http://[::1:1']);
  t.equal(compare.code, EXIT_STATUS.usage);
  t.equal(
    compare.stderr,
    "portolan conformance: --compare device=http://[::1:1: not a valid URL\nRun 'portolan conformance --help' for usage.\n",
    'before anything is probed',
  );
});
