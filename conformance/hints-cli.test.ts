import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { main } from './cli.ts';

// The two known causes on a real target (the reference system in-process, misconfigured on purpose):
// the failing lines name the setting to change, and the right setting makes the hint go away.

async function run(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--quiet', '--allow-writes', '--fuzz-runs', '0', '--seed', '7'], {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    env,
  });
  return { code, stdout, stderr };
}

t.test('registration answering 404 (the Host is not the registration host) names the Host sent and --var registrationHost', async (t) => {
  const { system } = await startTestSystem(t, { config: { validateResponses: false, registrationHost: 'register.example.com' } });
  const args = ['--target', `gateway=${system.url('gateway')}`, '--spec', 'client-registration', '--scenario', 'registration-too-large'];
  const wrong = await run(args);
  t.equal(wrong.code, 1);
  const failures = wrong.stdout.split('\n').filter((l) => /-> 404: client-registration registerClient: status/.test(l));
  t.ok(failures.length > 0, 'the registration requests failed with 404');
  // Sent with the default conformance derives from the gateway URL, not the host this target was configured with.
  const sent = `localhost:${new URL(system.url('gateway')).port}`;
  for (const line of failures)
    t.match(
      line,
      `— hint: every registration request (sent with Host ${sent}) was answered 404: registration is routed by Host; pass --var registrationHost=<the target's registration host>`,
    );
  t.match(
    wrong.stdout,
    /a registration body over the cap is 413: client-registration registerClient: expectation at \(root\): expected status 413, got 404 — hint: every registration request/,
    'the scenario step too',
  );
  t.match(
    wrong.stdout,
    /# hints \(a known cause explains these failures and skips; the setting to change\):\n# {3}every registration request/,
    'listed once in the summary',
  );

  const right = await run([...args, '--var', 'registrationHost=register.example.com']);
  t.notMatch(right.stdout, /hint:|answered 404/, "with the target's Host, no 404 and no hint");
});

t.test(
  'the registration Host follows the gateway: localhost:<its port>, as the reference system derives its own; --var still wins',
  async (t) => {
    // Every port 0 (PORTOLAN_GATEWAY_PORT=0 among them): the gateway gets a random port and expects localhost:<that port>.
    const { system } = await startTestSystem(t, { config: { validateResponses: false } });
    const port = new URL(system.url('gateway')).port;
    t.not(port, '8080', 'not the default port');
    t.equal(system.config.registrationHost, `localhost:${port}`, 'the reference system expects localhost:<gateway port>');
    const args = ['--target', `gateway=${system.url('gateway')}`, '--spec', 'client-registration', '--scenario', 'registration-too-large'];

    const moved = await run(args);
    t.notMatch(moved.stdout, /hint:|-> 404/, 'no --var: the registration requests reach registration, no 404 and no hint');
    t.match(moved.stdout, /ok \d+ - scenario registration-too-large\b/, 'the registration scenario ran');
    t.notMatch(moved.stdout, /not ok \d+ - scenario registration-too-large/, 'and passed');

    const overridden = await run([...args, '--var', 'registrationHost=register.example.com']);
    t.match(
      overridden.stdout,
      /— hint: every registration request \(sent with Host register\.example\.com\) was answered 404/,
      '--var wins over the derived default',
    );

    const bare = await run(['--target', system.url('gateway'), '--spec', 'client-registration', '--scenario', 'registration-too-large']);
    t.notMatch(bare.stdout, /hint: every registration request/, 'one URL for every role: its port too');
  },
);

t.test('every authenticated operation refused names the credential variables, never their values', async (t) => {
  const password = 'the-right-password-4c1e';
  const wrongPassword = 'not-the-password-9f3a';
  const { system } = await startTestSystem(t, { config: { validateResponses: false, adminPassword: password } });
  const args = ['--target', `device=${system.url('device')}`, '--spec', 'device-config', '--scenario', 'device-script-objects'];
  // The right credential first: the wrong one's refusals lock the account for a while.
  const right = await run(args, { CONFORMANCE_ADMIN_PASSWORD: password });
  t.equal(right.code, 0);
  t.notMatch(right.stdout, /hint:/, 'the right credential: no hint');

  const wrong = await run(args, { CONFORMANCE_ADMIN_PASSWORD: wrongPassword });
  t.equal(wrong.code, 1, 'the scenario fails');
  const hint =
    "every authenticated device-config operation was refused (401/403): check the 'admin' credential the engine sends, from CONFORMANCE_ADMIN_USER / CONFORMANCE_ADMIN_PASSWORD (else PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD) (it must be an account the target accepts)";
  const escaped = hint.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  t.match(
    wrong.stdout,
    new RegExp(
      `create a script object: device-config createRule: expectation at \\(root\\): expected status 200, got 401 — hint: ${escaped}`,
    ),
    'the failing step names the variables',
  );
  t.match(
    wrong.stdout,
    new RegExp(`ok \\d+ - device-config getDeviceInfo .* # SKIP the credentials were refused: .* — hint: ${escaped}`),
    'so does each operation skipped for it',
  );
  t.notMatch(wrong.stdout + wrong.stderr, new RegExp(`${wrongPassword}|${password}`), 'no credential is printed');
  t.match(
    wrong.stdout,
    /curl -sS -i -X POST http:\/\/127\.0\.0\.1:\d+\/mgmt\/tm\/traffic\/rule -u 'admin:'"\$\{CONFORMANCE_ADMIN_PASSWORD\}"/,
    'the failing step comes with its curl command, the password as the variable it came from',
  );
});
