import t from 'tap';
import { MAX_RUN_BYTES } from './interp.ts';
import { CONNECTION, request, runRules, sessionOf, testEnvironment } from './test-rules.ts';

const when = (body: string) => `when HTTP_REQUEST {\n${body}\n}`;

t.test('a loop past the step budget ends the run with an error, and the device logs it', async (t) => {
  const { outcome, lines } = runRules(when('while {1} { set a 1 }'), { budget: { maxSteps: 500, maxMs: 1e9 } });
  t.match(outcome, { kind: 'error', rule: 'rule1', message: /past its budget of 500 steps/ });
  t.match(lines, [/^rule1: aborted: the rule ran past its budget of 500 steps/]);
});

t.test('the step budget counts: a run just under it finishes', async (t) => {
  // 10 turns of `incr` cost well under 200 steps; 1000 turns cost more.
  t.same(runRules(when('for {set i 0} {$i < 10} {incr i} {}'), { budget: { maxSteps: 200, maxMs: 1e9 } }).outcome, { kind: 'continue' });
  t.equal(runRules(when('for {set i 0} {$i < 1000} {incr i} {}'), { budget: { maxSteps: 200, maxMs: 1e9 } }).outcome.kind, 'error');
});

t.test('a run past its time budget ends with an error (fake clock)', async (t) => {
  // Every reading of the clock moves it 1 ms on: the run reads it every 64 steps.
  const environment = testEnvironment({ tick: 1 });
  const { outcome } = runRules(when('while {1} { set a 1 }'), { environment, budget: { maxSteps: 1e9, maxMs: 20 } });
  t.match(outcome, { kind: 'error', message: /past its budget of 20 ms/ });
  t.ok(environment.clock.now < 1100, 'it stopped soon after the deadline');
});

t.test('the default budget stops an endless loop', async (t) => {
  t.match(runRules(when('while {1} {}')).outcome, { kind: 'error', message: /10000 steps/ });
});

t.test('string repeat past the byte bound ends the run before the string is built', async (t) => {
  const { outcome } = runRules(when(`set a [string repeat x ${MAX_RUN_BYTES + 1}]`));
  t.match(outcome, { kind: 'error', message: /built more than 1048576 bytes/ });
  t.equal(runRules(when('set a [string repeat x 1000]')).outcome.kind, 'continue');
});

t.test('append doubling in a loop hits the byte bound, not memory', async (t) => {
  const { outcome } = runRules(when('set s x\nwhile {1} { append s $s }'), { budget: { maxSteps: 1e6, maxMs: 1e9 } });
  t.match(outcome, { kind: 'error', message: /built more than/ });
});

t.test('variables growing request after request on one connection are bounded', async (t) => {
  const { session, environment } = sessionOf(when('append big [string repeat x 400000]'));
  const outcomes = [1, 2, 3].map(() => session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() }));
  // Each run builds 800 000 bytes (under the run's bound); the variable holds 400 000 more each time.
  t.same(outcomes.slice(0, 2), [{ kind: 'continue' }, { kind: 'continue' }]);
  t.match(outcomes[2], { kind: 'error', message: /variables hold more than/ });
  t.match(environment.lines, [/variables hold more than/]);
});

t.test('nested command substitution at run time is bounded in depth', async (t) => {
  // A variable holding an expression that nests deeper than the bound: refused as an error, no crash.
  const deep = `${'('.repeat(150)}1${')'.repeat(150)}`;
  const { outcome } = runRules(when(`set e {${deep}}\nexpr $e`));
  t.match(outcome, { kind: 'error', message: /nested too deeply/ });
});

t.test('a budget error is per run: the next request gets a fresh budget', async (t) => {
  const { session } = sessionOf(when('if {[HTTP::uri] eq "/loop"} { while {1} {} } else { log ok }'));
  t.equal(session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/loop') }).kind, 'error');
  t.same(session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/fine') }), { kind: 'continue' });
});
