import t from 'tap';
import fc from 'fast-check';
import type { TapTest } from '../../lib/tap-test.ts';
import { checkScript } from './tcl-script.ts';

// Every row was confirmed against tclsh 8.6 while developing (`info complete`, and the parse errors of
// compiling the text and each when body), so the rows stand alone and no tclsh is needed here. Two answers
// are this module's own: the nesting limit (Tcl takes 101 levels, and crashes on a megabyte of them) and
// the words for a final backslash-newline (Tcl's `info complete` says 0 without any message).
type Expected = 'ok' | { kind: 'incomplete' | 'syntax'; detail: string; line: number };
type Case = [name: string, script: string, expected: Expected];
const incomplete = (detail: string, line: number) => ({ kind: 'incomplete' as const, detail, line });
const syntax = (detail: string, line: number) => ({ kind: 'syntax' as const, detail, line });

const CASES: Case[] = [
  // Valid iRules
  ['the redirect iRule is complete', 'when HTTP_REQUEST {\n  HTTP::redirect https://[HTTP::host][HTTP::uri]\n}', 'ok'],
  [
    'HTTP::respond with quoted content and headers is complete',
    'when HTTP_REQUEST {\n  HTTP::respond 200 content "<html><body>Down for maintenance</body></html>" "Content-Type" "text/html"\n}',
    'ok',
  ],
  [
    'nested if/elseif/else inside a when body is complete',
    'when HTTP_REQUEST {\n  if { [HTTP::uri] starts_with "/api" } {\n    pool api_pool\n  } elseif { [HTTP::host] eq "example.com" } {\n    pool web_pool\n  } else {\n    drop\n  }\n}',
    'ok',
  ],
  [
    'a switch with braced patterns and bodies is complete',
    'when HTTP_REQUEST {\n  switch -glob [string tolower [HTTP::path]] {\n    "/static/*" { pool static_pool }\n    default { pool web_pool }\n  }\n}',
    'ok',
  ],
  [
    'several when blocks, one with expr braces inside a quoted log line, are complete',
    'when CLIENT_ACCEPTED {\n  set start [clock clicks]\n}\nwhen HTTP_RESPONSE {\n  log local0. "took [expr {[clock clicks] - $start}] clicks"\n}',
    'ok',
  ],
  ['a when with a priority is complete', 'when HTTP_REQUEST priority 100 {\n  HTTP::header insert X-Forwarded-Proto https\n}', 'ok'],
  ['nested braces in a plain command are one word', 'set a {x {y {z}} w}', 'ok'],
  ['a brace inside a quoted word at the top level is just a character', 'set open "{"', 'ok'],
  ['escaped braces inside a when body do not count', 'when HTTP_REQUEST {\n  set open \\{\n  set close \\}\n}', 'ok'],
  ['escaped quotes inside a quoted word do not end it', 'when HTTP_REQUEST {\n  log local0. "a \\"quoted\\" word"\n}', 'ok'],
  ['a brace in a top-level comment does not count', '# a stray { in a comment\nwhen HTTP_REQUEST {\n  pool web_pool\n}', 'ok'],
  ['a quote in a comment inside a body is hidden from the body', 'when HTTP_REQUEST {\n  # say "hello\n  pool web_pool\n}', 'ok'],
  ['a bracket in a comment inside a body is hidden from the body', 'when HTTP_REQUEST {\n  # [unfinished\n  pool web_pool\n}', 'ok'],
  ['semicolons separate commands, also inside quotes where they are characters', 'set a 1; set b 2;; puts "$a;$b"', 'ok'],
  ['a ;# comment after a command hides braces and quotes', 'set a 1 ;# a comment with { and "', 'ok'],
  ['backslash-newline continues a command inside a body', 'when HTTP_REQUEST {\n  HTTP::respond 200 \\\n    content "ok"\n}', 'ok'],
  ['backslash-newline continues a comment, hiding the next line', '# first line \\\n  { still the comment\nputs ok', 'ok'],
  ['a command substitution nests brackets and quotes of its own', 'set x [string map {a b} [lindex "[list "q" ]" 0]]', 'ok'],
  ['a close-bracket inside quotes within a substitution does not end it', 'puts [string length "a]b"]', 'ok'],
  ['variables with braced names and array indexes with substitutions are complete', 'puts "${my var} $arr([HTTP::host])"', 'ok'],
  ['a lone close-brace on its own line is a command named } to Tcl', 'when HTTP_REQUEST {\n  pool web_pool\n}\n}', 'ok'],
  [
    'a close-brace in a comment inside a body ends the body early, Tcl reads the rest as commands',
    'when HTTP_REQUEST {\n  # unmatched } in a comment\n  pool web_pool\n}',
    'ok',
  ],

  // Unbalanced
  [
    'a when body without its close-brace is incomplete where the body opened',
    'when HTTP_REQUEST {\n  pool web_pool\n',
    incomplete('missing close-brace', 1),
  ],
  [
    'an if body without its close-brace leaves the when body open',
    'when HTTP_REQUEST {\n  if { 1 } {\n    pool web_pool\n}',
    incomplete('missing close-brace', 1),
  ],
  [
    'a quoted brace inside a when body still counts for the outer braces',
    'when HTTP_REQUEST {\n  set open "{"\n}',
    incomplete('missing close-brace', 1),
  ],
  [
    "an open brace in a comment inside a body counts, with Tcl's hint",
    'when HTTP_REQUEST {\n  # a stray { here\n  pool web_pool\n}',
    incomplete('missing close-brace: possible unbalanced brace in comment', 1),
  ],
  ['a # that does not start a command is a word, so the brace after it counts', 'set a 1 # {', incomplete('missing close-brace', 1)],
  [
    'an extra close-brace followed by characters is a syntax error',
    'when HTTP_REQUEST {\n  pool web_pool\n}}',
    syntax('extra characters after close-brace', 3),
  ],
  ['characters right after a braced word are a syntax error', 'puts {a}"b"', syntax('extra characters after close-brace', 1)],
  ['a quoted word without its close-quote is incomplete', 'set a "abc\nset b 2', incomplete('missing "', 1)],
  [
    "a missing close-quote inside a when body is incomplete at the quote's line",
    'when HTTP_REQUEST {\n  pool web_pool\n  log local0. "unterminated\n}',
    incomplete('missing "', 3),
  ],
  ['characters right after a close-quote are a syntax error', 'set a "abc"def', syntax('extra characters after close-quote', 1)],
  [
    'characters after a close-quote inside a when body are a syntax error on their line',
    'when HTTP_REQUEST {\n  HTTP::respond 200 content "ok"x\n}',
    syntax('extra characters after close-quote', 2),
  ],
  ['a command substitution without its close-bracket is incomplete', 'set host [HTTP::host', incomplete('missing close-bracket', 1)],
  [
    "a missing close-bracket inside a when body is incomplete at the bracket's line",
    'when HTTP_REQUEST {\n  HTTP::redirect https://[HTTP::host[HTTP::uri]\n}',
    incomplete('missing close-bracket', 2),
  ],
  ['a substitution closed inside quotes still leaves the quotes open', 'puts "[format "%s" x]', incomplete('missing "', 1)],
  [
    'the second of several when blocks is checked too',
    'when CLIENT_ACCEPTED {\n  set a 1\n}\nwhen HTTP_REQUEST {\n  log local0. "x [HTTP::uri\n}',
    incomplete('missing close-bracket', 5),
  ],
  ['a braced variable name without its close-brace is incomplete', 'puts ${name', incomplete('missing close-brace for variable name', 1)],
  ['an array index without its close-paren is incomplete', 'puts $a(key', incomplete('missing )', 1)],
  ['a backslash-newline at the very end asks for another line', 'puts a \\\n', incomplete('backslash-newline at end', 1)],
  ['an escaped backslash before the final newline ends the script', 'puts a\\\\\n', 'ok'],
  ['three backslashes before the final newline escape it again', 'puts a\\\\\\\n', incomplete('backslash-newline at end', 1)],
  ['an empty script is incomplete', '', incomplete('empty script', 1)],
  ['a whitespace-only script is incomplete', '  \n\t\n', incomplete('empty script', 1)],
  ['command substitutions nested past the limit are refused', `puts ${'['.repeat(101)}${']'.repeat(101)}`, syntax('nesting too deep', 1)],
];

for (const [name, script, expected] of CASES) {
  t.test(name, async (t) => {
    t.same(checkScript(script), expected === 'ok' ? { ok: true } : { ok: false, ...expected });
  });
}

t.test('a 1 MB string of open braces or brackets answers with a bounded result', async (t) => {
  const size = 1 << 20;
  t.same(
    checkScript('{'.repeat(size)),
    { ok: false, kind: 'incomplete', detail: 'missing close-brace', line: 1 },
    'braces are only counted',
  );
  t.same(
    checkScript('['.repeat(size)),
    { ok: false, kind: 'syntax', detail: 'nesting too deep', line: 1 },
    'brackets nest, so they stop at the limit',
  );
  t.same(
    checkScript(`x ${'"['.repeat(size / 2)}`),
    { ok: false, kind: 'syntax', detail: 'nesting too deep', line: 1 },
    'also through quotes',
  );
});

// Balanced pieces: whatever they are combined into is a complete script. Braces inside quoted words and
// comments come escaped or in pairs, because a when body counts them at the outer level.
const bare = fc.stringMatching(/^[a-z][a-z0-9:_./-]{0,6}$/).filter((word) => word !== 'when');
const bracedText = fc.oneof(fc.stringMatching(/^[a-z \n"[\];$#]{0,8}$/), fc.constantFrom('\\{', '\\}', '\\"'));
const quotedText = fc.oneof(fc.stringMatching(/^[a-z \n;#\]]{0,8}$/), fc.constantFrom('\\{', '\\}', '\\"', '\\[', '{a}', '$x'));
const commentText = fc.oneof(fc.stringMatching(/^[a-z "[\];]{0,12}$/), fc.constant('see {RFC 9110}'));
const { script } = fc.letrec<{ script: string; command: string; word: string; braced: string; quoted: string; substitution: string }>(
  (tie) => ({
    script: fc
      .array(tie('command'), { minLength: 1, maxLength: 3 })
      .chain((commands) => fc.constantFrom('\n', ';', ' ;\n').map((separator) => commands.join(separator))),
    command: fc.oneof(
      { weight: 4, arbitrary: fc.array(tie('word'), { minLength: 1, maxLength: 4 }).map((words) => words.join(' ')) },
      // A comment carries its own newline so that nothing after it on the line is hidden by accident.
      { weight: 1, arbitrary: commentText.map((text) => `# ${text}\n`) },
    ),
    word: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      bare,
      tie('braced'),
      tie('quoted'),
      tie('substitution'),
      fc.tuple(bare, tie('substitution')).map(([prefix, substitution]) => `${prefix}${substitution}`),
    ),
    braced: fc.array(fc.oneof({ depthSize: 'small' }, bracedText, tie('braced')), { maxLength: 3 }).map((parts) => `{${parts.join('')}}`),
    quoted: fc
      .array(fc.oneof({ depthSize: 'small' }, quotedText, tie('substitution')), { maxLength: 3 })
      .map((parts) => `"${parts.join('')}"`),
    substitution: tie('script').map((inner) => `[${inner}]`),
  }),
);
const whenBlock = fc
  .record({
    event: fc.stringMatching(/^[A-Z][A-Z_]{2,14}$/),
    priority: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
    body: script,
  })
  .map(({ event, priority, body }) => `when ${event} ${priority === undefined ? '' : `priority ${priority} `}{\n${body}\n}`);

// fast-check shrinks a failing input only when the property throws, so the checks throw; the seed is fixed.
const assertProperty = <T extends unknown[]>(t: TapTest, property: fc.IProperty<T>, numRuns: number) => {
  fc.assert(property, { seed: 1717171717, numRuns });
  t.pass(`held for ${numRuns} runs`);
};
const same = (result: unknown, expected: unknown, text: string) => {
  if (JSON.stringify(result) !== JSON.stringify(expected)) throw new Error(`${JSON.stringify(text)} gave ${JSON.stringify(result)}`);
};

t.test('any script built from balanced pieces is complete, at the top level and as when bodies', async (t) => {
  const text = fc.array(fc.oneof(whenBlock, script), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('\n'));
  assertProperty(
    t,
    fc.property(text, (text) => same(checkScript(text), { ok: true }, text)),
    300,
  );
});

t.test('removing the last close-brace of a complete when block makes it incomplete where it opened', async (t) => {
  const parts = fc.tuple(fc.array(script, { maxLength: 2 }), whenBlock);
  assertProperty(
    t,
    fc.property(parts, ([before, block]) => {
      const text = [...before, block.slice(0, -1)].join('\n');
      const result = checkScript(text);
      const whenLine = before.join('\n').split('\n').length + (before.length > 0 ? 1 : 0);
      // Tcl adds its hint when a generated comment happens to hold a brace; the cause is the same.
      same(
        result.ok ? result : { ...result, detail: result.detail.replace(/: possible unbalanced brace in comment$/, '') },
        { ok: false, kind: 'incomplete', detail: 'missing close-brace', line: whenLine },
        text,
      );
    }),
    300,
  );
});

t.test('any text at all gets an answer, with a line inside the text', async (t) => {
  const unit = fc.constantFrom('a', ' ', '\n', ';', '{', '}', '"', '[', ']', '\\', '#', '$', '(', ')');
  assertProperty(
    t,
    fc.property(fc.string({ unit, maxLength: 40 }), (text) => {
      const result = checkScript(text);
      if (!result.ok && !(result.line >= 1 && result.line <= text.split('\n').length))
        throw new Error(`${JSON.stringify(text)} gave line ${result.line}`);
    }),
    500,
  );
});
