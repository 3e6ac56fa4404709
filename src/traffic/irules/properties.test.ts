import fc from 'fast-check';
import t from 'tap';
import type { TapTest } from '../../lib/tap-test.ts';
import { compileRules } from './compile.ts';
import { BINARY } from './expr-parse.ts';
import { Source } from './model.ts';
import { ParseError, Parser } from './parse.ts';
import { checkScript } from './tcl-check.ts';
import { CONNECTION, request, testEnvironment } from './test-rules.ts';
import type { RuleEvent } from './types.ts';

// fast-check shrinks a failing input only when the property throws, so the checks throw; the seed is fixed.
const assertProperty = <T extends unknown[]>(t: TapTest, property: fc.IProperty<T>, numRuns: number) => {
  fc.assert(property, { seed: 424242, numRuns });
  t.pass(`held for ${numRuns} runs`);
};

/**
 * Whether the interpreter's parser reads a text as the checker does: the whole text, then the body of each
 * `when` (the last word, braced, of a command named `when` with three words or more). A construct Tcl reads
 * but the interpreter refuses (`{*}`, arrays) counts as read. The checker's own extras: an empty text and a
 * final backslash-newline are incomplete.
 */
function parserReads(text: string): { ok: true } | { ok: false; line: number } {
  const source = new Source(text);
  if (/^[ \t\n\v\f\r]*$/.test(text)) return { ok: false, line: 1 };
  try {
    // The parser as parseScript uses it, without its final refusal of what the interpreter does not run.
    const [script] = new Parser(source, text.length).script(0, undefined);
    if (/(^|[^\\])(\\\\)*\\\n$/.test(text)) return { ok: false, line: source.lineAt(text.length - 2) };
    for (const command of script.commands) {
      const [first] = command.words;
      const body = command.words.at(-1)!;
      if (
        first?.literal === 'when' &&
        (first.braced || !first.source.text.slice(first.start, first.end).includes('\\')) &&
        command.words.length >= 3 &&
        body.braced
      ) {
        new Parser(source, body.end - 1).script(body.start + 1, undefined);
      }
    }
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    return { ok: false, line: source.lineAt(error.at) };
  }
}

const agree = (text: string) => {
  const checked = checkScript(text);
  const parsed = parserReads(text);
  const same = checked.ok === parsed.ok && (checked.ok || parsed.ok || checked.line === parsed.line);
  if (!same) throw new Error(`${JSON.stringify(text)}: checker ${JSON.stringify(checked)}, parser ${JSON.stringify(parsed)}`);
};

t.test('the checker and the parser agree on what reads, and where it fails, over random texts', async (t) => {
  const unit = fc.constantFrom(
    'a',
    ' ',
    '\n',
    ';',
    '{',
    '}',
    '"',
    '[',
    ']',
    '\\',
    '#',
    '$',
    '(',
    ')',
    '*',
    '{*}',
    'when ',
    'X ',
    '\t',
    '::',
  );
  assertProperty(t, fc.property(fc.string({ unit, maxLength: 40 }), agree), 3000);
});

t.test('the checker and the parser agree on texts that look like rules', async (t) => {
  const piece = fc.constantFrom(
    'when HTTP_REQUEST {',
    '}',
    '{',
    '\n',
    ' ',
    'if {[HTTP::uri] eq "/a"} {',
    '"',
    '[',
    ']',
    '$x',
    '${x}',
    '$a(',
    ')',
    '\\',
    '\\\n',
    '# c {\n',
    ';',
    'log "x [HTTP::host]"',
  );
  assertProperty(
    t,
    fc.property(
      fc.array(piece, { maxLength: 14 }).map((parts) => parts.join('')),
      agree,
    ),
    3000,
  );
});

// Rules built from the supported commands: every rule compiles or is refused, and every run ends in an outcome.
const atom = fc.constantFrom(
  'a',
  '0',
  '1',
  '-1',
  '08',
  '1.5',
  '0x1f',
  '/api',
  '/static/x.css',
  '*',
  'web_pool',
  'api_pool',
  'Host',
  'end',
  'true',
  'x y',
);
const variable = fc.constantFrom('$a', '$b', '${c}', '$i');
// Quoted, not braced: `{*}` followed by more word would be argument expansion.
const quoteWord = (text: string) => `"${text}"`;
const { script } = fc.letrec<{ script: string; command: string; word: string; cond: string; operand: string }>((tie) => ({
  script: fc.array(tie('command'), { minLength: 1, maxLength: 4 }).map((commands) => commands.join('\n')),
  word: fc.oneof(
    { depthSize: 'small' },
    atom.map(quoteWord),
    variable,
    fc.tuple(atom, variable).map(([text, v]) => `"${text}${v}"`),
    tie('operand').map((operand) => (operand.startsWith('[') ? operand : `"${operand.replaceAll('"', '')}"`)),
  ),
  operand: fc.oneof(
    { depthSize: 'small' },
    variable,
    atom.map((text) => `"${text}"`),
    fc.constantFrom(
      '[HTTP::uri]',
      '[HTTP::host]',
      '[HTTP::path]',
      '[HTTP::header value Host]',
      '[IP::client_addr]',
      '[string length $a]',
      '[llength $b]',
    ),
    tie('word').map((word) => `[string tolower ${word}]`),
  ),
  cond: fc
    .tuple(tie('operand'), fc.constantFrom(...Object.keys(BINARY).filter((op) => op !== 'matches_regex')), tie('operand'))
    .map(([a, op, b]) => `${a} ${op} ${b}`),
  command: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(fc.constantFrom('a', 'b', 'c', 'i'), tie('word')).map(([name, word]) => `set ${name} ${word}`),
    fc.tuple(fc.constantFrom('a', 'b'), tie('word')).map(([name, word]) => `append ${name} ${word}`),
    fc.constantFrom('incr i', 'return', 'event disable', 'reject', 'drop', 'HTTP::redirect /moved', 'set i 0', 'log [HTTP::header names]'),
    tie('word').map((word) => `log local0. ${word}`),
    tie('word').map((word) => `pool ${word}`),
    tie('word').map((word) => `HTTP::header insert X-Test ${word}`),
    tie('word').map((word) => `HTTP::uri ${word}`),
    tie('word').map((word) => `HTTP::respond 200 content ${word} Content-Type text/plain`),
    fc.tuple(tie('word'), tie('word')).map(([a, b]) => `set a [string map [list ${a} ${b}] $a]`),
    fc.tuple(tie('word'), tie('word')).map(([a, b]) => `set b [expr {${a} ${'+'} ${b}}]`),
    fc.tuple(tie('cond'), tie('script'), tie('script')).map(([cond, yes, no]) => `if {${cond}} {\n${yes}\n} else {\n${no}\n}`),
    fc
      .tuple(tie('word'), atom, tie('script'), tie('script'))
      .map(
        ([subject, pattern, body, other]) => `switch -glob -- ${subject} {\n${quoteWord(pattern)} {\n${body}\n}\ndefault {\n${other}\n}\n}`,
      ),
    fc.tuple(tie('word'), tie('script')).map(([list, body]) => `foreach x ${list} {\n${body}\n}`),
    tie('script').map((body) => `while {$i < 3} {\nincr i\n${body}\n}`),
  ),
}));
const rule = fc
  .array(
    fc.tuple(fc.constantFrom('CLIENT_ACCEPTED', 'HTTP_REQUEST', 'HTTP_RESPONSE'), fc.option(fc.integer({ min: 0, max: 1000 })), script),
    { minLength: 1, maxLength: 3 },
  )
  .map((blocks) =>
    blocks.map(([event, priority, body]) => `when ${event}${priority === null ? '' : ` priority ${priority}`} {\n${body}\n}`).join('\n'),
  );

const EVENTS: RuleEvent[] = ['CLIENT_ACCEPTED', 'HTTP_REQUEST', 'HTTP_RESPONSE', 'HTTP_REQUEST'];

/** Compiles and runs a connection's events; everything the rules did, as data. */
function exercise(texts: string[]) {
  const compiled = compileRules(texts.map((text, i) => ({ name: `r${i}`, text })));
  if (!compiled.ok) return { refusal: compiled.refusal };
  const environment = testEnvironment({ tick: 0 });
  const session = compiled.rules.session(environment);
  const trace: unknown[] = [];
  for (const event of EVENTS) {
    const req = request('/api/v1?q=1', [['Host', 'www.example.com']]);
    const response = { status: 200, headers: [['Server', 'm'] as [string, string]] };
    const outcome = session.run(event, { connection: CONNECTION, request: req, response }, { maxSteps: 2000, maxMs: 50 });
    if (outcome.kind === 'error' && /call stack|internal/i.test(outcome.message))
      throw new Error(`a crash turned into an error: ${outcome.message}`);
    if (!['continue', 'respond', 'reject', 'drop', 'error'].includes(outcome.kind)) throw new Error(`no such outcome: ${outcome.kind}`);
    trace.push(outcome, req, response);
  }
  return { trace, lines: environment.lines };
}

t.test('random rules from the supported commands always compile, and every run ends in an outcome, never a throw', async (t) => {
  let ran = 0;
  assertProperty(
    t,
    fc.property(fc.array(rule, { minLength: 1, maxLength: 2 }), (texts) => {
      const result = exercise(texts);
      if ('refusal' in result) throw new Error(`refused: ${result.refusal?.message}\n${texts.join('\n---\n')}`);
      ran++;
    }),
    400,
  );
  t.equal(ran, 400);
});

t.test('a run is deterministic: the same rules on the same connection do the same', async (t) => {
  assertProperty(
    t,
    fc.property(fc.array(rule, { minLength: 1, maxLength: 2 }), (texts) => {
      const first = JSON.stringify(exercise(texts));
      const second = JSON.stringify(exercise(texts));
      if (first !== second) throw new Error(`${first}\n!==\n${second}`);
    }),
    200,
  );
});

t.test('random texts never make the compiler throw: they compile or are refused with a line inside the text', async (t) => {
  const unit = fc.constantFrom(
    'when HTTP_REQUEST ',
    '{',
    '}',
    ' ',
    '\n',
    '[',
    ']',
    '"',
    '$a',
    'set a 1',
    'log x',
    'if {1} ',
    'expr {',
    '1 +',
    'pool p',
    '\\',
  );
  assertProperty(
    t,
    fc.property(fc.string({ unit, maxLength: 30 }), (text) => {
      const result = compileRules([{ name: 'r', text }]);
      if (!result.ok && !(result.refusal.line >= 1 && result.refusal.line <= text.split('\n').length)) {
        throw new Error(`${JSON.stringify(text)}: line ${result.refusal.line}`);
      }
    }),
    2000,
  );
});
