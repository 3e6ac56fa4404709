import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { startTestSystem } from '../src/app/test-system.ts';
import { loadOperationData } from './data-files.ts';
import { runConformance } from './run.ts';

const ADMIN = { user: 'admin', password: 'conformance-safe-password' };

t.test('safe mode sends nothing destructive, no wrong password and does not fuzz unless asked', async (t) => {
  const requests: { method?: string; operationId?: string }[] = [];
  let markerSeen = () => {};
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const entry = JSON.parse(line);
        if (entry.msg === 'request') requests.push({ method: entry.method, operationId: entry.operationId });
        if (entry.msg === 'request' && entry.method === 'PROPFIND') markerSeen();
      }
      done();
    },
  });
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN.password }, logger: pino({ level: 'info' }, sink) });
  const targets = Object.fromEntries(system.roles.map((r) => [r.role, r.url]));
  const interfaces = ['mapping', 'access-session', 'device-config', 'client-registration'] as const;
  const result = await runConformance({
    targets,
    interfaces,
    safe: true,
    credentials: { admin: ADMIN, registration: ADMIN },
    seed: 3,
    env: {},
  });

  t.equal(result.fuzzRuns, 0, 'fuzzing is off by default in safe mode');
  t.same(result.fuzz, []);
  const outcome = (id: string) => result.operations.find((o) => o.operationId === id)!;
  t.match(outcome('deleteAccessSession'), { outcome: 'skipped', reason: 'safe mode: a DELETE operation' });
  t.match(outcome('createOauthClientApp'), { outcome: 'skipped', reason: /^safe mode: creates an OAuth client application/ });
  t.match(outcome('registerClient'), { outcome: 'skipped', reason: /^safe mode: creates a client application/ });
  t.equal(outcome('createAccessSession').outcome, 'pass', 'what is not destructive is still checked');
  const scenario = (name: string) => result.scenarios.find((s) => s.name === name)!;
  t.match(scenario('device-oauth-client-app'), { outcome: 'skipped', reason: /^safe mode/ });
  t.match(scenario('client-registration'), { outcome: 'skipped', reason: /^safe mode/ });
  t.match(scenario('access-session-lifecycle'), {
    outcome: 'skipped',
    reason: /^safe mode: step '.*' calls deleteAccessSession \(a DELETE operation\)/,
  });
  t.equal(scenario('jwt-split').outcome, 'pass');
  t.notOk(
    result.operations.some((o) => o.probes.some((p) => p.name === 'wrong credentials')),
    'no wrong password is sent',
  );
  t.ok(
    result.operations.some((o) => o.probes.some((p) => p.name === 'no credentials')),
    'requests without credentials still are',
  );

  // A request is logged when its answer has gone out: one more request, logged after every answer of the run,
  // tells when the log holds them all (an event, not a pause).
  const logged = new Promise<void>((resolve) => (markerSeen = resolve));
  await (await fetch(`${targets.mapping}/`, { method: 'PROPFIND' })).arrayBuffer(); // a method no check sends
  await logged;
  const destructive = new Set(
    Object.entries(loadOperationData())
      .filter(([, d]) => d.destructive)
      .map(([id]) => id),
  );
  t.ok(requests.length > 50, `the server saw the run (${requests.length} requests)`);
  t.same(
    requests.filter((r) => r.method === 'DELETE'),
    [],
    'the server received no DELETE',
  );
  t.same(
    requests.filter((r) => r.operationId && destructive.has(r.operationId)),
    [],
    'nor any operation listed as destructive',
  );

  const fuzzed = await runConformance({
    targets,
    interfaces: ['access-session'],
    safe: true,
    fuzzRuns: 2,
    scenarios: [],
    credentials: { admin: ADMIN },
    seed: 3,
    env: {},
  });
  t.ok(
    fuzzed.fuzz.some((f) => f.operationId === 'createAccessSession'),
    'asked for, fuzzing runs in safe mode',
  );
  t.notOk(
    fuzzed.fuzz.some((f) => f.operationId === 'deleteAccessSession'),
    'but never on a destructive operation',
  );

  // Valid requests refused like ones without credentials: the run's credentials are wrong, nothing was tested.
  const refused = await runConformance({
    targets,
    interfaces: ['access-session'],
    credentials: { admin: { user: 'admin', password: 'not-the-password' } },
    scenarios: [],
    fuzzRuns: 0,
    env: {},
  });
  t.match(
    refused.operations.find((o) => o.operationId === 'createAccessSession'),
    { outcome: 'skipped', reason: /^the credentials were refused: valid requests got 401/ },
    'wrong run credentials: skipped, never passed',
  );
  t.equal(refused.totals.operations.pass, 0);
});
