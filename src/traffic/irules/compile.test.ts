import t from 'tap';
import { compileRules } from './compile.ts';
import { runRules, sessionOf } from './test-rules.ts';

const refusalOf = (text: string, name = 'r') => {
  const result = compileRules([
    { name: 'ok', text: 'when HTTP_REQUEST { pool web_pool }' },
    { name, text },
  ]);
  return result.ok ? undefined : result.refusal;
};

const REFUSALS: Array<[name: string, text: string, expected: { line: number; command?: string; message: RegExp }]> = [
  [
    'an unknown command, with its line',
    'when HTTP_REQUEST {\n  set a 1\n  HTTP::cookie value x\n}',
    { line: 3, command: 'HTTP::cookie', message: /unknown command "HTTP::cookie"/ },
  ],
  [
    'an unknown command in an if body',
    'when HTTP_REQUEST {\n  if {1} {\n\n    nosuch\n  }\n}',
    { line: 4, command: 'nosuch', message: /unknown command "nosuch"/ },
  ],
  [
    'an unknown command in a switch arm',
    'when HTTP_REQUEST {\n  switch x {\n    a { pool web_pool }\n    b {\n      TCP::collect\n    }\n  }\n}',
    { line: 5, command: 'TCP::collect', message: /unknown command "TCP::collect"/ },
  ],
  [
    'an unknown command in an if condition',
    'when HTTP_REQUEST {\n  if { [SSL::cipher] eq "x" } { drop }\n}',
    { line: 2, command: 'SSL::cipher', message: /unknown command/ },
  ],
  [
    'an unknown command in a command substitution',
    'when HTTP_REQUEST {\n  log "[nosuch]"\n}',
    { line: 2, command: 'nosuch', message: /unknown command "nosuch"/ },
  ],
  ['a computed command name', 'when HTTP_REQUEST {\n  set cmd drop\n  [set cmd] x\n}', { line: 3, message: /computed when the rule runs/ }],
  ['a computed if body', 'when HTTP_REQUEST {\n  set b {drop}\n  if {1} $b\n}', { line: 3, command: 'if', message: /must be written out/ }],
  ['an unknown event', 'when HTTP_REQUEST_DATA {\n  drop\n}', { line: 1, command: 'when', message: /unknown event "HTTP_REQUEST_DATA"/ }],
  [
    'a top-level command other than when',
    'set x 1\nwhen HTTP_REQUEST { drop }',
    { line: 1, command: 'set', message: /only "when" blocks/ },
  ],
  [
    'a when inside a body',
    'when HTTP_REQUEST {\n  when HTTP_RESPONSE { drop }\n}',
    { line: 2, command: 'when', message: /only at the top level/ },
  ],
  ['a priority out of range', 'when HTTP_REQUEST priority 1001 { drop }', { line: 1, command: 'priority', message: /0 to 1000/ }],
  ['text the checker refuses', 'when HTTP_REQUEST {\n  log "unterminated\n}', { line: 2, message: /incomplete command: missing "/ }],
  ['extra characters after a quote', 'when HTTP_REQUEST {\n  log "a"b\n}', { line: 2, message: /extra characters after close-quote/ }],
  [
    'an unknown string subcommand',
    'when HTTP_REQUEST {\n  string wordend x 1\n}',
    { line: 2, command: 'string', message: /unknown subcommand "string wordend"/ },
  ],
  [
    'pool member',
    'when HTTP_REQUEST {\n  pool web_pool member 10.0.0.1 80\n}',
    { line: 2, command: 'pool', message: /member" is not supported/ },
  ],
  ['argument expansion', 'when HTTP_REQUEST {\n  log {*}$x\n}', { line: 2, message: /\{\*\} \(argument expansion\) is not supported/ }],
  ['array variables', 'when HTTP_REQUEST {\n  log $a(b)\n}', { line: 2, message: /array variables/ }],
  [
    'an invalid expression',
    'when HTTP_REQUEST {\n  if { [HTTP::host] eq example.com } { drop }\n}',
    { line: 2, message: /invalid bareword "example"/ },
  ],
  [
    'an octal literal that is not octal',
    'when HTTP_REQUEST {\n  set a [expr {08 + 1}]\n}',
    { line: 2, message: /a leading 0 means octal/ },
  ],
  [
    'an unsafe regular expression',
    'when HTTP_REQUEST {\n  if { [HTTP::uri] matches_regex {(a+)+$} } { drop }\n}',
    { line: 2, message: /nested repetition/ },
  ],
  [
    'an unknown switch option',
    'when HTTP_REQUEST {\n  switch -regexp x { a { drop } }\n}',
    { line: 2, command: 'switch', message: /"-regexp" is not supported/ },
  ],
  ['an unknown math function', 'when HTTP_REQUEST {\n  set a [expr {sqrt(4)}]\n}', { line: 2, message: /unknown math function "sqrt"/ }],
];

for (const [name, text, expected] of REFUSALS) {
  t.test(`refused when attached: ${name}`, async (t) => {
    const refusal = refusalOf(text);
    t.ok(refusal, 'refused');
    t.equal(refusal?.rule, 'r', 'names the rule');
    t.equal(refusal?.line, expected.line, 'names the line');
    t.equal(refusal?.command, expected.command, 'names the command');
    t.match(refusal?.message, expected.message);
    t.match(refusal?.message, new RegExp(`^rule "r", line ${expected.line}: `), 'the message says where');
  });
}

t.test('a rule made only of supported commands is accepted, with its events known', async (t) => {
  const result = compileRules([
    { name: 'r', text: 'when CLIENT_ACCEPTED { set a 1 }\nwhen HTTP_REQUEST priority 100 timing on { pool web_pool }' },
  ]);
  t.ok(result.ok);
  if (!result.ok) return;
  t.ok(result.rules.handles('HTTP_REQUEST'));
  t.ok(result.rules.handles('CLIENT_ACCEPTED'));
  t.notOk(result.rules.handles('HTTP_RESPONSE'));
});

t.test('a body is compiled once when attached, not per request', async (t) => {
  const { session } = sessionOf('when HTTP_REQUEST {\n  if {[HTTP::host] eq "a"} { log a } else { log b }\n}');
  const { CONNECTION, request } = await import('./test-rules.ts');
  const parse = await import('./parse.ts');
  // Any parse at run time would go through parseScript/Parser: count the scripts built while running.
  let parsed = 0;
  const original = parse.Parser.prototype.script;
  parse.Parser.prototype.script = function (...args) {
    parsed++;
    return original.apply(this, args);
  };
  t.teardown(() => {
    parse.Parser.prototype.script = original;
  });
  for (let i = 0; i < 5; i++) session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  t.equal(parsed, 0);
});

t.test('handlers run by priority (lower first, default 500), then rule order, then text order', async (t) => {
  const { lines } = runRules([
    'when HTTP_REQUEST { log r1-default }\nwhen HTTP_REQUEST priority 100 { log r1-100 }\nwhen HTTP_REQUEST { log r1-default-second }',
    'when HTTP_REQUEST priority 100 { log r2-100 }\nwhen HTTP_REQUEST priority 900 { log r2-900 }',
    'priority 200\nwhen HTTP_REQUEST { log r3-rule-priority-200 }\nwhen HTTP_REQUEST priority 0 { log r3-0 }',
  ]);
  t.same(
    lines.map((line) => line.replace(/^rule\d: /, '')),
    ['r3-0', 'r1-100', 'r2-100', 'r3-rule-priority-200', 'r1-default', 'r1-default-second', 'r2-900'],
  );
});

t.test('a run-time error in one rule ends the event with an error naming the rule; the device log has the line', async (t) => {
  const { outcome, lines } = runRules([
    'when HTTP_REQUEST { log first }',
    'when HTTP_REQUEST {\n\n  set x $nope\n}',
    'when HTTP_REQUEST { log never }',
  ]);
  t.same(outcome, { kind: 'error', rule: 'rule2', message: `error: can't read "nope": no such variable (line 3)` });
  t.same(lines, ['rule1: first', `rule2: error: can't read "nope": no such variable (line 3)`]);
});

t.test('bodies nested thousands deep are refused when attached, not a stack overflow', async (t) => {
  const nested = (n: number, open: string, close: string) => `when HTTP_REQUEST {\n  ${open.repeat(n)}set a 1${close.repeat(n)}\n}`;
  for (const [open, close] of [
    ['if { 1 } { ', ' }'],
    ['foreach x {1} { ', ' }'],
    ['switch a { a { ', ' } }'],
    ['if { [if { 1 } { ', ' }] } {}'],
  ] as const) {
    t.match(refusalOf(nested(5000, open, close)), { rule: 'r', message: /nested more than 200 deep/ }, `${open}... 5000 deep`);
    t.equal(refusalOf(nested(50, open, close)), undefined, `${open}... 50 deep is attached`);
  }
});
