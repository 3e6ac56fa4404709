// XML request bodies of interface C: the fields of the root element, or a bounded 400 that echoes nothing.
import t from 'tap';
import { xmlFields } from './xml-request.ts';

const fields = (text: string) => {
  const read = xmlFields(text, 'snapshot');
  return read.ok ? read.value : read.error;
};

t.test('the child elements of <snapshot> come as text, references and CDATA decoded, as written', async (t) => {
  t.same(fields('<snapshot><description>After the upgrade</description><visible_in_gui>false</visible_in_gui></snapshot>'), {
    description: 'After the upgrade',
    visible_in_gui: 'false',
  });
  t.same(
    fields(
      '<?xml version="1.0" encoding="UTF-8"?>\n<snapshot>\n  <description> a &amp; &lt;b&gt; caf&#233; &#x1F600; </description>\n</snapshot>\n',
    ),
    { description: ' a & <b> café 😀 ' },
    'declaration and indentation ignored, character references decoded, the value untrimmed',
  );
  t.same(fields('<snapshot><description><![CDATA[<script>x</script>]]></description></snapshot>'), { description: '<script>x</script>' });
  t.same(fields('\uFEFF<snapshot><support_case/></snapshot>'), { support_case: '' }, 'a byte order mark and an empty element');
  t.same(fields('<snapshot></snapshot>'), {}, 'no field: the schema refuses the empty update');
  t.same(
    fields('<snapshot><description><b>x</b></description><description>y</description></snapshot>'),
    { description: [{ b: 'x' }, 'y'] },
    'nested and repeated elements are left for the schema to refuse (not text)',
  );
});

t.test('what is not an update in XML is malformedBody, naming a place but never the input', async (t) => {
  const refused: [string, string, RegExp][] = [
    [
      'not well-formed',
      '<snapshot><description>secret-value</snapshot>',
      /^The request body is not well-formed XML \(line 1, column \d+\)\.$/,
    ],
    ['not XML at all', 'description=secret-value', /^The request body is not well-formed XML \(line 1/],
    ['empty', '', /^The request body is not well-formed XML/],
    ['another root', '<record><description>secret-value</description></record>', /^The XML body must have one root element, <snapshot>\.$/],
    ['two roots', '<snapshot/><snapshot/>', /^The XML body must have one root element, <snapshot>\.$/],
    ['text beside the fields', '<snapshot>secret-value<description>x</description></snapshot>', /holds text outside its field elements/],
    ['text only', '<snapshot>secret-value</snapshot>', /holding one element per field/],
    [
      'an entity bomb',
      '<!DOCTYPE snapshot [<!ENTITY a "secret-value"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><snapshot><description>&b;</description></snapshot>',
      /^A document type declaration is not accepted/,
    ],
    ['an external entity', '<!DOCTYPE snapshot SYSTEM "file:///etc/passwd"><snapshot/>', /^A document type declaration is not accepted/],
    ['a prototype name', '<snapshot><__proto__>secret-value</__proto__></snapshot>', /could not be read as XML/],
    [
      'too deep',
      `<snapshot>${'<a>'.repeat(5000)}secret-value${'</a>'.repeat(5000)}</snapshot>`,
      /could not be read as XML \(too deeply nested/,
    ],
  ];
  for (const [what, text, message] of refused) {
    const read = xmlFields(text, 'snapshot');
    t.notOk(read.ok, `${what}: refused`);
    if (read.ok) continue;
    t.equal(read.error.code, 'malformedBody', `${what}: malformedBody (400)`);
    t.match(read.error.message, message, what);
    t.notMatch(read.error.message, /secret-value|passwd/, `${what}: the input is not echoed`);
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');
});
