import t from 'tap';
import { MAX_RUN_BYTES } from './interp.ts';
import { findFirst, findLast } from './search.ts';
import { CONNECTION, evalTcl, request, runRules, sessionOf, testEnvironment } from './test-rules.ts';

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
  // Whichever bound it meets first: what the run built, or what the variable may hold.
  t.match(outcome, { kind: 'error', message: /built more than|variables hold more than/ });
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

t.test('string map counts the work of matching long keys: a step budget ends it', async (t) => {
  // Every position starts a match of the 3001-character key that fails at its end: about 120 million
  // characters compared, far past 10 000 steps of 1024.
  const body = 'set b [string repeat a 40000]\nset k "[string repeat a 3000]b"\nstring map [list $k x] $b';
  t.match(runRules(when(body)).outcome, { kind: 'error', message: /past its budget of 10000 steps/ });
  // An ordinary map still runs within the default budget.
  t.same(runRules(when('set b [string repeat "a-b " 10000]\nset c [string map {- _ a A} $b]')).outcome, { kind: 'continue' });
});

t.test('string map reads the clock while it runs: a time budget ends a long map (fake clock)', async (t) => {
  const environment = testEnvironment({ tick: 1 });
  const body = 'set b [string repeat a 40000]\nset k "[string repeat a 3000]b"\nstring map [list $k x] $b';
  const { outcome } = runRules(when(body), { environment, budget: { maxSteps: 1e9, maxMs: 20 } });
  t.match(outcome, { kind: 'error', message: /past its budget of 20 ms/ });
  t.ok(environment.clock.now < 1100, 'it stopped soon after the deadline');
});

t.test('operations that read a whole long value count its length against the steps', async (t) => {
  // Each reads an 800 000-character value once: about 780 steps of 1024 characters, past a budget of 300.
  const budget = { maxSteps: 300, maxMs: 1e9 };
  const long = 'set b [string repeat "a " 400000]\n';
  const cases: Record<string, string> = {
    in: 'expr {"z" in $b}',
    ni: 'expr {"z" ni $b}',
    eq: 'expr {$b eq "z"}',
    foreach: 'foreach x $b { break }',
    'string trim': 'string trim $b',
    'string trimleft': 'string trimleft $b " a"',
    'string equal -nocase': 'string equal -nocase $b $b',
    'string compare': 'string compare $b $b',
    'switch -glob': 'switch -glob $b { "*z*y" {} }',
    concat: 'concat $b',
  };
  for (const [name, script] of Object.entries(cases)) {
    t.match(runRules(when(long + script), { budget }).outcome, { kind: 'error', message: /past its budget of 300 steps/ }, name);
  }
  // The same operations on short values cost a step or two.
  for (const [name, script] of Object.entries(cases)) {
    t.same(runRules(when(`set b "a b"\n${script}`), { budget }).outcome, { kind: 'continue' }, `${name}, short`);
  }
});

t.test('a loop over an O(n) operation is stopped by the clock near its time budget (fake clock)', async (t) => {
  // Every reading of the clock moves it 1 ms on. Each `in` reads 200 000 characters, about 195 steps: the
  // clock is read every turn, so a 20 ms budget ends the loop after about 20 turns (not 16 times that).
  const environment = testEnvironment({ tick: 1 });
  const rule = when(
    'if {[HTTP::uri] eq "/n"} { log $n } else { set b [string repeat "a " 100000]\nset n 0\nwhile 1 { incr n; if {"z" in $b} {} } }',
  );
  const { session } = sessionOf(rule, environment);
  const budget = { maxSteps: 1e9, maxMs: 20 };
  t.match(session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/loop') }, budget), {
    kind: 'error',
    message: /past its budget of 20 ms/,
  });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/n') });
  const turns = Number(environment.lines.at(-1)!.replace('rule1: ', ''));
  t.ok(turns > 0 && turns <= 25, `${turns} turns ran`);
});

t.test('a connection variable is bounded when it is stored, even when the run then fails', async (t) => {
  // Each request appends 400 000 characters, then the rule fails: the bound holds all the same.
  const rule = when('if {[info exists big]} { log [string length $big] }\nappend big [string repeat x 400000]\nexpr {1/0}');
  const { session, environment } = sessionOf(rule);
  const outcomes = [1, 2, 3, 4].map(() => session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() }));
  t.match(outcomes[0], { kind: 'error', message: /divide by zero/ });
  t.match(outcomes[1], { kind: 'error', message: /divide by zero/ });
  t.match(outcomes[2], { kind: 'error', message: /variables hold more than 1048576 bytes/ });
  // Past the bound, the connection's variables are dropped: the next request starts over.
  t.match(outcomes[3], { kind: 'error', message: /divide by zero/ });
  t.same(
    environment.lines.filter((line) => /^rule1: \d+$/.test(line)),
    ['rule1: 400000', 'rule1: 800000'],
  );
});

t.test('every way of storing a variable is bounded: set, lappend, foreach; replacing or unsetting gives room back', async (t) => {
  // Across requests (each run builds under its own 1 MiB): `/fill` stores 800 000 characters, then a store.
  const run = (script: string, uris: string[]) => {
    const rule = when(`if {[HTTP::uri] eq "/fill"} { set a [string repeat x 800000] } else { ${script} }`);
    const { session } = sessionOf(rule);
    return uris.map((uri) => session.run('HTTP_REQUEST', { connection: CONNECTION, request: request(uri) }));
  };
  for (const script of [
    'set b [string repeat y 300000]',
    'lappend b [string repeat y 300000]',
    'foreach b [list [string repeat y 300000]] {}',
  ]) {
    t.match(run(script, ['/fill', '/store']), [{ kind: 'continue' }, { kind: 'error', message: /variables hold more than/ }], script);
    t.same(run(script, ['/store']), [{ kind: 'continue' }], `${script} alone`);
  }
  const replace = 'if {[HTTP::uri] eq "/b"} { set b [string repeat z 300000] } else { unset a }';
  t.same(run(replace, ['/fill', '/fill', '/unset', '/b']), Array(4).fill({ kind: 'continue' }));
  t.match(run(replace, ['/fill', '/b']), [{ kind: 'continue' }, { kind: 'error', message: /variables hold more than/ }]);
});

t.test('string first, string last and contains find long needles as the built-ins do (linear search)', async (t) => {
  // A needle past 32 characters is searched in linear time (search.ts): V8's own search slows to the
  // product of the lengths on needles such as this one (seconds for 40 000 in 450 000).
  const needle = `${'a'.repeat(40)}b${'a'.repeat(40)}`;
  const haystack = `${'a'.repeat(100)}${needle}ab${needle}${'a'.repeat(10)}`;
  for (const [start, last] of [
    [0, haystack.length],
    [150, 150],
    [0, 100],
    [300, 99],
  ] as const) {
    t.equal(findFirst(haystack, needle, start), haystack.indexOf(needle, start), `first from ${start}`);
    t.equal(findLast(haystack, needle, last), haystack.lastIndexOf(needle, last), `last at ${last}`);
  }
  const overlapping = 'ab'.repeat(40);
  t.equal(findLast(overlapping.repeat(3), overlapping), overlapping.repeat(3).lastIndexOf(overlapping));
  t.equal(evalTcl(`string first ${needle} a${haystack}`), String(haystack.indexOf(needle) + 1));
  t.equal(evalTcl(`string last ${needle} ${haystack}`), String(haystack.lastIndexOf(needle)));
  t.equal(evalTcl(`expr {"${haystack}" contains "${needle}"}`), '1');
  // The search is counted: a 40 000-character needle in 450 000 costs about 480 steps, past a budget of 300.
  const long = 'set b [string repeat a 450000]\nset k "[string repeat a 20000]b[string repeat a 20000]"\n';
  const budget = { maxSteps: 300, maxMs: 1e9 };
  t.match(runRules(when(`${long}string last $k $b`), { budget }).outcome, { kind: 'error', message: /300 steps/ });
  t.same(runRules(when(`${long}string last $k $b`), { budget: { maxSteps: 1000, maxMs: 1e9 } }).outcome, { kind: 'continue' });
});
