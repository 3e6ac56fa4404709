import { setupServer } from 'msw/node';
import t from 'tap';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { createStatefulHandlers } from '../mocks/stateful-handlers.ts';
import { compareRuns } from './differential.ts';
import { createFetchClient } from './http.ts';
import { formatViolation } from './model.ts';
import { describe, startReferenceTarget } from './reference-target.ts';
import { summaryLines } from './report-text.ts';
import { verdict } from './report-json.ts';
import { runConformance } from './run.ts';

// Hosts that exist nowhere: every request must be taken by a handler (`onUnhandledFrame: 'error'`),
// none can reach a server that happens to run on this machine.
const BASE_URLS = Object.fromEntries(ROLE_NAMES.map((role) => [role, `http://${role}.msw.test`])) as Record<RoleName, string>;

t.test(
  'the MSW stateful handlers pass the whole suite, as the reference does: valid and invalid requests, scenarios, fuzzing',
  async (t) => {
    // The registration endpoint answers only its configured Host, here the gateway's; a small limit
    // keeps the rate-limit scenario short (the engine reads it from the system, as for the reference).
    const mocks = await createStatefulHandlers({
      baseUrls: BASE_URLS,
      config: { registrationHost: 'gateway.msw.test', rateLimitLimit: 10 },
    });
    const server = setupServer(...mocks.handlers);
    server.listen({ onUnhandledFrame: 'error' });
    let listening = true;
    const stopMsw = () => {
      if (listening) server.close();
      listening = false;
    };
    t.teardown(async () => {
      stopMsw();
      await mocks.close();
    });
    const reference = await describe(mocks.system, mocks.system.config, mocks.admin.password);
    const seen: string[] = [];
    server.events.on('request:start', ({ request }) => void seen.push(new URL(request.url).host));

    // MSW intercepts fetch, not undici's own request: the engine sends through fetch here.
    const options = { seed: 20250314, fuzzRuns: 3, env: {} };
    const result = await runConformance({
      ...options,
      targets: BASE_URLS,
      credentials: reference.credentials,
      variables: reference.variables,
      transport: createFetchClient,
    });

    const violations = [
      ...result.operations.flatMap((o) =>
        o.probes.flatMap((p) => p.violations.map((v) => `${p.kind} ${p.name} -> ${p.status ?? 'no answer'}: ${formatViolation(v)}`)),
      ),
      ...result.scenarios.flatMap((s) =>
        s.steps.flatMap((st) => st.violations.map((v) => `scenario ${s.name}: ${st.name}: ${formatViolation(v)}`)),
      ),
      ...result.fuzz.flatMap((f) =>
        f.failure ? [`fuzz ${f.operationId}: ${f.failure.request}: ${f.failure.violations.map(formatViolation).join('; ')}`] : [],
      ),
    ];
    t.same(violations, [], 'no answer breaks its spec');
    t.same(
      result.operations
        .filter((o) => o.outcome !== 'pass' && o.outcome !== 'not-implemented')
        .map((o) => `${o.interface} ${o.operationId}@${o.role}: ${o.outcome} ${o.reason ?? ''}`),
      [],
      'every operation passes (or is not implemented yet, as on the reference)',
    );
    t.same(
      result.scenarios
        .filter((s) => s.outcome !== 'pass' && s.outcome !== 'not-implemented')
        .map((s) => `${s.name}: ${s.outcome} ${s.reason ?? ''}`),
      [],
      'every scenario passes (or is not implemented yet)',
    );
    for (const name of ['chart-create-then-read', 'unknown-id-404', 'payload-too-large', 'rate-limit-window']) {
      t.equal(result.scenarios.find((s) => s.name === name)?.outcome, 'pass', `scenario ${name} passes: the handlers keep state`);
    }
    t.ok(verdict(result).ok, 'the run passes');

    const probes = result.operations.flatMap((o) => o.probes);
    t.ok(
      probes.some((p) => p.kind === 'invalid' && p.outcome === 'pass' && p.status === 400),
      'invalid requests are refused with the declared 400',
    );
    t.ok(
      probes.some((p) => p.name === 'wrong credentials' && p.outcome === 'pass'),
      'wrong credentials are refused: the handlers check them',
    );
    t.ok(
      result.fuzz.length > 0 && result.fuzz.every((f) => f.outcome === 'pass' || f.outcome === 'not-implemented'),
      'fuzzing finds nothing',
    );
    // Besides the engine's requests, MSW sees the system's own on its loopback listeners (let through).
    const listeners = new Set(mocks.system.roles.map((r) => String(r.port)));
    const engine = seen.filter((host) => host.endsWith('.msw.test'));
    t.ok(engine.length > 300, `the engine's requests went through MSW (${engine.length})`);
    t.same(
      seen.filter((host) => !host.endsWith('.msw.test') && !listeners.has(host.split(':').pop()!)),
      [],
      'nothing else: no request reached a server outside the test',
    );
    t.comment(summaryLines(result).join('\n'));

    // The same run against the reference server over its sockets (undici): every request both sent
    // got the same status and a body of the same shape.
    stopMsw(); // the reference is reached over real sockets
    const referenceServer = await startReferenceTarget({ config: { rateLimitLimit: 10 } });
    t.teardown(() => referenceServer.stop());
    const direct = await runConformance({
      ...options,
      targets: referenceServer.targets,
      credentials: referenceServer.credentials,
      variables: referenceServer.variables,
    });
    const conflicts = compareRuns(direct, result)
      .filter((d) => d.conflict)
      .map((d) => `${d.key}: ${d.detail}`);
    t.same(conflicts, [], 'the handlers answer as the reference server does, request by request');
    t.equal(direct.totals.operations.pass, result.totals.operations.pass, 'the same operations pass');
  },
);
