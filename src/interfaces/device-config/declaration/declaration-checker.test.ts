import t from 'tap';
import { createFakeClock } from '../../../lib/clock.ts';
import type { TapTest } from '../../../lib/tap-test.ts';
import { checkDeployRequest, checkStoredRequest, prepareDeclarationText, storedRequestText } from './checked-request.ts';
import { createDeclarationChecker } from './declaration-checker.ts';
import { info, requestExamples, schemaAt, spec } from './test-spec.ts';

const bytes = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));

/** A checker whose thread checks every body (no inline limit), on a fake clock. */
function threadChecker(t: TapTest, budgetMs = 60_000) {
  const clock = createFakeClock();
  const checker = createDeclarationChecker({
    document: spec,
    schemas: async () => schemaAt,
    info,
    timers: clock,
    budgetMs,
    inlineBytes: 0,
  });
  t.teardown(() => checker.close());
  return { checker, clock };
}

const BAD_BODIES: Record<string, unknown> = {
  'no class': {},
  'a tenant without class': { class: 'ADC', schemaVersion: '3.0.0', T: {} },
  'a pool of bad members': {
    class: 'ADC',
    schemaVersion: '3.0.0',
    T: { class: 'Tenant', A: { class: 'Application', p: { class: 'Pool', members: Array.from({ length: 300 }, () => ({})) } } },
  },
  'a pool naming a missing monitor': {
    class: 'ADC',
    schemaVersion: '3.0.0',
    T: { class: 'Tenant', A: { class: 'Application', p: { class: 'Pool', monitors: [{ use: 'nothing' }] } } },
  },
};

t.test('the thread answers every body exactly as the check on this thread does', async (t) => {
  const { checker } = threadChecker(t);
  const bodies = { ...Object.fromEntries(Object.entries(requestExamples).map(([name, example]) => [name, example.value])), ...BAD_BODIES };
  for (const [name, body] of Object.entries(bodies)) {
    t.same(await checker.check(bytes(body), {}), checkDeployRequest(body, schemaAt, info, {}), name);
    const stored = storedRequestText(JSON.stringify(body), { updateMode: 'complete' });
    t.same(await checker.checkStored(stored), checkStoredRequest(stored, schemaAt, info), `${name}, saved as a queued task`);
  }
  const [first] = Object.values(requestExamples);
  t.same(
    await checker.check(bytes(first!.value), { updateMode: 'complete' }),
    checkDeployRequest(first!.value, schemaAt, info, { updateMode: 'complete' }),
    'with a query',
  );
  t.same(await checker.check(new TextEncoder().encode('{"class":'), {}), { ok: false, malformed: true }, 'a body that is not JSON');
  const declaration = JSON.stringify((first!.value as { declaration: unknown }).declaration);
  t.same(await checker.prepare(declaration), prepareDeclarationText(declaration), 'a saved declaration, prepared again');
});

t.test('a check over its time budget fails, and the next check gets a new thread', async (t) => {
  const { checker, clock } = threadChecker(t, 1000);
  const body = BAD_BODIES['a tenant without class'];
  const late = checker.check(bytes(body), {});
  clock.advance(1000);
  await t.rejects(late, { message: 'the declaration check took longer than 1000 ms' });
  t.same(await checker.check(bytes(body), {}), checkDeployRequest(body, schemaAt, info, {}), 'answered by a new thread');
});

t.test('small bodies are checked on this thread, without starting one', async (t) => {
  const clock = createFakeClock();
  let loaded = 0;
  const checker = createDeclarationChecker({
    document: {},
    schemas: async () => (loaded++, schemaAt),
    info,
    timers: clock,
    budgetMs: 1000,
  });
  t.teardown(() => checker.close());
  const body = BAD_BODIES['no class'];
  // A thread given this empty document could not check anything: the answer proves it was not used.
  t.same(await checker.check(bytes(body), {}), checkDeployRequest(body, schemaAt, info, {}));
  t.same(
    await checker.check(undefined, {}),
    checkDeployRequest(undefined, schemaAt, info, {}),
    'no body at all reads as a body without a class',
  );
  t.equal(loaded, 2, 'the schemas of this thread were used');
  t.same(clock.pendingTimers(), [], 'no check is waiting on a thread');
});
