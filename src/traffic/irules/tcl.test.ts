import t from 'tap';
import { evalTcl, runRules } from './test-rules.ts';

// Each row: a script, and what tclsh 8.6 gives for it (integers as Tcl 8.4's 64-bit wide ints, the
// rule language's dialect).
const CASES: Array<[name: string, script: string, expected: string]> = [
  // Words and substitution
  ['set returns the value and $x reads it', 'set x 5; set y "$x$x"', '55'],
  ['${name} reads a variable next to other text', 'set x a; set y ${x}b', 'ab'],
  ['braces are verbatim: no substitution inside', 'set x 1; set y {$x [set x]}', '$x [set x]'],
  ['command substitution nests', 'set y [string toupper [string range abcdef 1 3]]', 'BCD'],
  ['backslash sequences in quotes', 'set y "a\\tb\\x41\\u0042\\101"', 'a\tbABA'],
  ['a lone $ is a character', 'set y "cost: $"', 'cost: $'],
  ['$::x is the variable x', 'set x 3; set y $::x', '3'],
  ['# at command start is a comment', 'set y 1\n# set y 2\nset y', '1'],
  ['semicolons separate commands', 'set a 1; set b 2; set y $a$b', '12'],
  ['backslash-newline inside braces becomes one space', 'set y {a\\\n     b}', 'a b'],
  // expr: integers
  ['integer division rounds towards minus infinity', 'expr {7 / -2}', '-4'],
  ['modulo takes the sign of the divisor', 'expr {-7 % 3}', '2'],
  ['precedence: * before +', 'expr {1 + 2 * 3}', '7'],
  ['parentheses', 'expr {(1 + 2) * 3}', '9'],
  ['** is right-associative', 'expr {2 ** 3 ** 2}', '512'],
  ['64-bit integers wrap', 'expr {9223372036854775807 + 1}', '-9223372036854775808'],
  ['hex and octal literals (a leading 0 is octal)', 'expr {0x10 + 010}', '24'],
  ['bitwise operators and shifts', 'expr {(6 & 3) | (1 << 4) ^ 1}', '19'],
  ['~ is bitwise not', 'expr {~5}', '-6'],
  ['unary minus on a variable', 'set x 4; expr {-$x}', '-4'],
  // expr: doubles
  ['a double keeps its point', 'expr {3.0 * 2}', '6.0'],
  ['double division', 'expr {7 / 2.0}', '3.5'],
  ['int() truncates', 'expr {int(-3.7)}', '-3'],
  ['round() rounds half away from zero', 'expr {round(2.5)}', '3'],
  ['abs(), min(), max()', 'expr {abs(-3) + min(4, 2, 9) + max(1, 5)}', '10'],
  ['double()', 'expr {double(3)}', '3.0'],
  // expr: comparison
  ['== compares as numbers when both are numbers', 'expr {"10" == "10.0"}', '1'],
  ['== compares as strings otherwise', 'expr {"abc" == "abc"}', '1'],
  ['< on strings is string order', 'expr {"abc" < "abd"}', '1'],
  ['< on numbers is numeric', 'expr {"9" < "10"}', '1'],
  ['eq compares strings only', 'expr {"10" eq "10.0"}', '0'],
  ['ne', 'expr {"a" ne "b"}', '1'],
  ['in and ni test list membership', 'expr {"b" in {a b c} && "z" ni {a b}}', '1'],
  // expr: logic
  ['&& short-circuits (the right side would fail)', 'expr {0 && $undefined}', '0'],
  ['|| short-circuits', 'expr {1 || $undefined}', '1'],
  ['! and not', 'expr {!0 + [expr {not 1}]}', '1'],
  ['and/or words', 'expr {1 and (0 or 1)}', '1'],
  ['ternary picks one side only', 'expr {1 ? "yes" : $undefined}', 'yes'],
  ['true/false words are booleans', 'expr {true && !false}', '1'],
  // expr: the rule language's operators
  ['contains', 'expr {"/api/v1" contains "api"}', '1'],
  ['starts_with', 'expr {"/api/v1" starts_with "/api"}', '1'],
  ['ends_with', 'expr {"a.jpg" ends_with ".png"}', '0'],
  ['equals', 'expr {"a" equals "a"}', '1'],
  ['matches_glob', 'expr {"/static/a.css" matches_glob "/static/*.css"}', '1'],
  ['matches_regex', 'expr {"abc123" matches_regex {^[a-z]+[0-9]+$}}', '1'],
  ['expr with several arguments joins them', 'set a 2; expr $a + 3', '5'],
  // if
  [
    'if/elseif/else takes the first true branch',
    'set x 2; if {$x == 1} {set y one} elseif {$x == 2} {set y two} else {set y other}',
    'two',
  ],
  ['if with then and else words', 'if {0} then {set y a} else {set y b}', 'b'],
  ['if with no true branch and no else is empty', 'set y [if {0} {set z 1}]', ''],
  ['if conditions accept yes/no', 'if {"yes"} {set y ok}', 'ok'],
  // switch
  ['switch -exact (default)', 'switch b {a {set y 1} b {set y 2} default {set y 3}}', '2'],
  ['switch -glob', 'switch -glob /img/a.png {/css/* {set y css} /img/* {set y img}}', 'img'],
  ['switch default', 'switch zzz {a {set y 1} default {set y d}}', 'd'],
  ['switch - falls through to the next body', 'switch b {a - b - c {set y abc} default {set y d}}', 'abc'],
  ['switch -- ends options', 'switch -- -x {-x {set y dash}}', 'dash'],
  ['switch -nocase', 'switch -nocase ABC {abc {set y lower}}', 'lower'],
  ['switch with patterns as separate words', 'switch -glob foo f* {set y f} default {set y d}', 'f'],
  // string
  ['string tolower/toupper', 'set y [string tolower AbC][string toupper aBc]', 'abcABC'],
  ['string length', 'string length hello', '5'],
  ['string match with a class and -nocase', 'string match -nocase {[a-c]*.TXT} b.txt', '1'],
  ['string match with ? and an escape', 'string match {a?c\\*} abc*', '1'],
  ['string range with end', 'string range abcdef 2 end', 'cdef'],
  ['string range end-1', 'string range abcdef end-1 end', 'ef'],
  ['string range past the ends', 'string range abc -5 99', 'abc'],
  ['string map tries the keys in the order given', 'string map {abc X ab Y} abcab', 'XY'],
  ['string map -nocase', 'string map -nocase {A 1} aAa', '111'],
  ['string first', 'string first b abcb', '1'],
  ['string first with a start', 'string first b abcb 2', '3'],
  ['string first not found', 'string first z abc', '-1'],
  ['string last', 'string last b abcb', '3'],
  ['string equal -nocase', 'string equal -nocase ABC abc', '1'],
  ['string compare', 'string compare a b', '-1'],
  ['string trim with chars', 'string trim xxhixx x', 'hi'],
  ['string trimleft / trimright', 'set y [string trimleft "  a "]|[string trimright "  a "]', 'a |  a'],
  ['string index', 'string index abc end', 'c'],
  ['string repeat', 'string repeat ab 3', 'ababab'],
  ['string reverse', 'string reverse abc', 'cba'],
  // lists
  ['list quotes elements that need it', 'list a {b c} "" "x\\{"', 'a {b c} {} x\\{'],
  ['lindex', 'lindex {a {b c} d} 1', 'b c'],
  ['lindex end and nested indexes', 'lindex {a {b c}} end 0', 'b'],
  ['lindex out of range is empty', 'set y [lindex {a b} 5]', ''],
  ['llength', 'llength {a {b c} "d e" f}', '4'],
  ['split on characters', 'split a/b//c /', 'a b {} c'],
  ['split into characters', 'split abc {}', 'a b c'],
  ['join', 'join {a b c} ,', 'a,b,c'],
  ['lappend', 'set l a; lappend l {b c} d', 'a {b c} d'],
  ['concat', 'concat " a " b', 'a b'],
  // variables and loops
  ['incr', 'set i 5; incr i; incr i 10', '16'],
  ['incr an unset variable starts from 0', 'incr fresh', '1'],
  ['append', 'set s a; append s b c', 'abc'],
  ['unset and info exists', 'set v 1; unset v; info exists v', '0'],
  ['foreach over a list', 'set s ""; foreach x {a b c} {append s $x-}; set s', 'a-b-c-'],
  ['foreach with two variables', 'set s ""; foreach {k v} {a 1 b 2} {append s $k=$v,}; set s', 'a=1,b=2,'],
  ['break and continue', 'set s ""; foreach x {1 2 3 4} {if {$x == 2} continue; if {$x == 4} break; append s $x}; set s', '13'],
  ['while', 'set i 0; while {$i < 5} {incr i}; set i', '5'],
  ['for', 'set s 0; for {set i 0} {$i < 4} {incr i} {incr s $i}; set s', '6'],
];

for (const [name, script, expected] of CASES) {
  t.test(name, async (t) => {
    t.equal(evalTcl(script), expected);
  });
}

const ERRORS: Array<[name: string, script: string, message: RegExp]> = [
  ['division by zero', 'expr {1 / 0}', /divide by zero/],
  ['arithmetic on a word', 'expr {"abc" + 1}', /non-numeric string "abc" as operand of "\+"/],
  ['% on a double', 'expr {5.0 % 2}', /floating-point value as operand of "%"/],
  ['reading an unset variable', 'set y $nope', /can't read "nope": no such variable/],
  ['a non-boolean condition', 'if {"maybe"} {set y 1}', /expected boolean value but got "maybe"/],
  ['08 is no number (a leading 0 means octal)', 'set v 08; expr {$v + 1}', /non-numeric string "08"/],
  ['a bareword in an expression built at run time', 'set e {1 eq abc}; expr $e', /invalid bareword "abc"/],
  ['wrong # args', 'string length', /wrong # args: should be "string length string"/],
  ['an unsafe regular expression built at run time', 'set p {(a+)+$}; expr {"aaa" matches_regex $p}', /nested repetition/],
  ['break outside a loop', 'break', /"break" outside of a loop/],
];

for (const [name, script, message] of ERRORS) {
  t.test(`an error: ${name}`, async (t) => {
    const { outcome, lines } = runRules(`when HTTP_REQUEST {\n${script}\n}`);
    t.equal(outcome.kind, 'error');
    t.match(outcome.kind === 'error' ? outcome.message : '', message);
    t.match(lines.at(-1), /^rule1: error: .*\(line 2\)$|^rule1: error: invoked/, 'the device log names the rule and the line');
  });
}

t.test('return ends the when body, and only that one', async (t) => {
  const { lines } = runRules(['when HTTP_REQUEST {\nlog a\nreturn\nlog b\n}', 'when HTTP_REQUEST {\nlog c\n}']);
  t.same(lines, ['rule1: a', 'rule2: c']);
});

t.test('variables last as long as the connection, across events and rules', async (t) => {
  const { sessionOf, CONNECTION, request } = await import('./test-rules.ts');
  const { session, environment } = sessionOf([
    'when CLIENT_ACCEPTED {\nset seen 0\n}',
    'when HTTP_REQUEST {\nincr seen\nlog "request $seen"\n}',
  ]);
  session.run('CLIENT_ACCEPTED', { connection: CONNECTION });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  t.same(environment.lines, ['rule2: request 1', 'rule2: request 2']);
});
