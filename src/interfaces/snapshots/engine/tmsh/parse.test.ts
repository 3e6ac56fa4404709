import t from 'tap';
import { parseTmsh, type TmshNode } from './parse.ts';

const everything = () => true;
const words = (nodes: readonly TmshNode[] | undefined) => (nodes ?? []).map((node) => node.words.join(' '));

t.test('objects, their entries and nested blocks, quoted strings with escapes, comments and the version line', async (t) => {
  const parsed = parseTmsh(
    [
      '#TMSH-VERSION: 15.1.8.2',
      '',
      'ltm pool /Common/p {',
      '    description "a { brace, \\"quotes\\" and \\\\"',
      '    members {',
      '        /Common/a:80 { address 10.0.0.1 } /Common/b:80 { }',
      '    }',
      '    monitor min 2 of { /Common/http /Common/tcp }',
      '}',
      'sys db log.access.level { value "debug" }',
      'ltm monitor http /Common/m {',
      '    send "GET / HTTP/1.1\\r\\n"',
      '}',
      '',
    ].join('\n'),
    everything,
  );
  t.equal(parsed.tmshVersion, '15.1.8.2');
  t.same(
    parsed.objects.map((o) => o.header),
    [
      ['ltm', 'pool', '/Common/p'],
      ['sys', 'db', 'log.access.level'],
      ['ltm', 'monitor', 'http', '/Common/m'],
    ],
  );
  const pool = parsed.objects[0]!.block!;
  t.same(pool[0]!.words, ['description', 'a { brace, "quotes" and \\']);
  t.same(words(pool[1]!.block), ['/Common/a:80', '/Common/b:80']);
  t.same(words(pool[1]!.block![0]!.block), ['address 10.0.0.1']);
  t.same(pool[2], { words: ['monitor', 'min', '2', 'of'], block: [{ words: ['/Common/http', '/Common/tcp'] }] });
  t.same(parsed.objects[1]!.block, [{ words: ['value', 'debug'] }]);
  t.same(parsed.objects[2]!.block![0]!.words, ['send', 'GET / HTTP/1.1\\r\\n'], 'an escape other than \\" and \\\\ is kept as written');
  t.equal(parsed.complete, true);
  t.same(parsed.problems, []);
});

t.test('a script body is kept as written: Tcl braces counted, quotes and comments are Tcl text', async (t) => {
  const body =
    '# a comment with {braces}\nwhen HTTP_REQUEST {\n    regsub -all {"} $x {\\"} x\n    if { $x eq "\\}" } { log local0. "\\{" }\n}';
  const parsed = parseTmsh(`ltm rule /Common/r {\n${body}\n}\nltm pool /Common/after { }\n`, everything);
  t.same(
    parsed.objects.map((o) => o.header.at(-1)),
    ['/Common/r', '/Common/after'],
  );
  t.equal(parsed.objects[0]!.raw, body);
  t.equal(parseTmsh('ltm rule /Common/empty {\n}\n', everything).objects[0]!.raw, '');
});

t.test(
  'unknown kinds and unwanted objects are skipped without being built; a multi-line quoted string does not end them early',
  async (t) => {
    const parsed = parseTmsh(
      'security bot-defense profile /Common/b {\n    body "<html>}\n{ still in the string</html>"\n}\nltm pool /Common/p { }\napm policy x { a { b { c } } }\n',
      (header) => header[1] === 'pool',
    );
    t.same(
      parsed.objects.map((o) => o.header),
      [['ltm', 'pool', '/Common/p']],
    );
    t.equal(parsed.complete, true);
  },
);

t.test('an object nested too deep or too big is left out with a problem; the file reads on', async (t) => {
  const deep = `ltm pool /Common/deep {\n${'{ '.repeat(40)}${'} '.repeat(40)}\n}\nltm pool /Common/next { }\n`;
  const parsed = parseTmsh(deep, everything);
  t.same(
    parsed.objects.map((o) => o.header.at(-1)),
    ['/Common/next'],
  );
  t.match(parsed.problems, [/line 1: ltm pool \/Common\/deep is nested more than 32 levels deep; it was left out/]);

  const big = `ltm pool /Common/big {\n${'    x y z\n'.repeat(100)}}\nltm pool /Common/next { }\n`;
  const small = parseTmsh(big, everything, { maxDepth: 32, maxObjectItems: 50, maxObjects: 10 });
  t.same(
    small.objects.map((o) => o.header.at(-1)),
    ['/Common/next'],
  );
  t.match(small.problems, [/has more than 50 words and entries/]);
});

t.test('an object that never ends stops the file; what came before is kept', async (t) => {
  for (const broken of [
    'ltm pool /Common/open {\n    members {\n',
    'ltm pool /Common/open {\n    description "no end\n}\n',
    'ltm rule /Common/r {\nwhen X {\n}\n',
  ]) {
    const parsed = parseTmsh(`ltm pool /Common/first { }\n${broken}ltm pool /Common/never { }\n`, everything);
    t.same(
      parsed.objects.map((o) => o.header.at(-1)),
      ['/Common/first'],
      JSON.stringify(broken),
    );
    t.equal(parsed.complete, false);
    t.match(parsed.problems, [/line 2: ltm (pool|rule) \/Common\/(open|r) does not end \(unbalanced braces or quotes\)/]);
  }
});

t.test('stray closing braces, headers without a body and the object limit', async (t) => {
  const parsed = parseTmsh('}\nsys management-ip 10.0.0.1/24\nltm pool /Common/a { }\nltm pool /Common/b { }\n', everything, {
    maxDepth: 32,
    maxObjectItems: 100,
    maxObjects: 2,
  });
  t.same(
    parsed.objects.map((o) => o.header),
    [
      ['sys', 'management-ip', '10.0.0.1/24'],
      ['ltm', 'pool', '/Common/a'],
    ],
  );
  t.match(parsed.problems, [/line 1: a closing brace outside any object was skipped/, /more than 2 objects: ltm pool \/Common\/b/]);
});

t.test('pathological text is read in one linear pass: deep braces, long lines, a million unterminated quotes', async (t) => {
  // Each of these would make a backtracking or re-scanning reader quadratic; here each is one pass.
  const cases = [
    `ltm pool /Common/x ${'{'.repeat(2_000_000)}`,
    `ltm rule /Common/x ${'{'.repeat(2_000_000)}`,
    `ltm pool /Common/x { description ${'"'.repeat(1_000_001)} }\n`.repeat(2),
    `${'ltm pool /Common/x { a\n'.repeat(200_000)}`,
    `ltm pool /Common/x {\n    ${'w '.repeat(1_000_000)}\n}\n`,
  ];
  for (const text of cases) {
    const parsed = parseTmsh(text, everything);
    t.ok(parsed.objects.length <= 1);
  }
});
