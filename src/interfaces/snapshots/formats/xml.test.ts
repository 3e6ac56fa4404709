import fc from 'fast-check';
import t from 'tap';
import type { DiagnosticOutput, Snapshot } from '../../../../generated/snapshots/types.gen.ts';
import { responseExamples, JSON_TYPE, XML_TYPE } from './test-spec-examples.ts';
import { realisticOutput } from './test-outputs.ts';
import { outline, parseStrict, select, selectOne, shape } from './test-xml.ts';
import { commandsXml, commandXml, diagnosticsXml, errorXml, filesXml, fileXml, processingXml, snapshotIdsXml, snapshotXml } from './xml.ts';

/** The builder of each schema that has an XML form in the spec. */
const BUILDERS: Record<string, (value: any) => string> = {
  Snapshot: snapshotXml,
  SnapshotIdList: snapshotIdsXml,
  SnapshotProcessing: processingXml,
  DiagnosticOutput: diagnosticsXml,
  SnapshotFileList: filesXml,
  SnapshotCommandList: commandsXml,
  SnapshotFile: fileXml,
  SnapshotCommand: commandXml,
  DiagnosticsError: errorXml,
};

const examples = responseExamples().filter((e) => e.byType[JSON_TYPE] !== undefined && BUILDERS[e.schema]);
const pairs = examples.filter((e) => typeof e.byType[XML_TYPE] === 'string');
const diagnosticsExample = (name: string) =>
  examples.find((e) => e.schema === 'DiagnosticOutput' && e.name === name)!.byType[JSON_TYPE] as DiagnosticOutput;
const readyRecord = examples.find((e) => e.schema === 'Snapshot' && e.name === 'ready')!.byType[JSON_TYPE] as Snapshot;

t.test('every XML example of the spec is what the builder makes of the JSON example of the same name', async (t) => {
  t.ok(pairs.length >= 60, `${pairs.length} pairs of examples`);
  t.same(
    new Set(pairs.map((p) => p.schema)),
    new Set(Object.keys(BUILDERS)),
    'every builder is checked against the spec, every XML schema has a builder',
  );
  for (const example of pairs) {
    const built = parseStrict(BUILDERS[example.schema]!(example.byType[JSON_TYPE]));
    const expected = parseStrict(example.byType[XML_TYPE] as string);
    t.same(outline(built.documentElement!), outline(expected.documentElement!), `${example.where}: element names and order`);
    t.same(shape(built.documentElement!), shape(expected.documentElement!), `${example.where}: names, attributes and values`);
  }
});

t.test('the JSON-only examples (set=all, no hits, a failed record, empty lists) give well-formed XML', async (t) => {
  const single = examples.filter((e) => e.byType[XML_TYPE] === undefined);
  t.same(single.map((e) => e.name).sort(), ['all', 'failedRecord', 'noHits', 'nothingToDelete', 'sample']);
  for (const example of single) t.doesNotThrow(() => parseStrict(BUILDERS[example.schema]!(example.byType[JSON_TYPE])), example.where);
  const noHits = parseStrict(diagnosticsXml(diagnosticsExample('noHits')));
  t.equal(selectOne(noHits, '/diagnostic_output/diagnostics/@hit_count'), '0');
  t.equal(select(noHits, '//diagnostic').length, 0);
});

t.test("the seed's XPath: @hit_count of diagnostics, each diagnostic's @name and its h_header descendant", async (t) => {
  const output = realisticOutput('all');
  const doc = parseStrict(diagnosticsXml(output));
  t.equal(selectOne(doc, '/diagnostic_output/diagnostics/@hit_count'), String(output.diagnostics.hit_count));
  t.equal(selectOne(doc, '/diagnostic_output/diagnostics/@miss_count'), String(output.diagnostics.miss_count));
  t.equal(selectOne(doc, '/diagnostic_output/diagnostics/@filter'), 'all');
  t.same(
    select(doc, '//diagnostic/@name'),
    output.diagnostics.diagnostic.map((d) => d.name),
  );
  for (const d of output.diagnostics.diagnostic) {
    const at = `//diagnostic[@name="${d.name}"]`;
    t.equal(selectOne(doc, `${at}//h_header`), d.results.h_header, `${d.name}: h_header`);
    t.equal(selectOne(doc, `${at}/results/h_header`), d.results.h_header, `${d.name}: h_header inside results`);
    t.equal(selectOne(doc, `${at}/run_data/match`), String(d.run_data.match));
    t.equal(selectOne(doc, `${at}/run_data/h_importance`), d.run_data.h_importance);
    t.same(select(doc, `${at}/output/line`), d.output);
    t.same(select(doc, `${at}/results/h_sols/url`), d.results.h_sols);
    t.same(select(doc, `${at}/results/h_cve_ids/cve_id`), d.results.h_cve_ids);
  }
  t.equal(select(doc, '//diagnostic[run_data/match="true"]').length, output.diagnostics.hit_count);
  t.equal(selectOne(doc, '/diagnostic_output/system_information/chassis_serial'), output.system_information.chassis_serial);
  t.equal(selectOne(doc, '/diagnostic_output/version'), output.version);
});

/** Markup, entity look-alikes, every C0 control, lone surrogates, the two non-characters, an emoji. */
const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
const HOSTILE = `<a href="x">&amp; 'q' ]]> &lt; </a>${C0}\uD800 \uDC00x\uFFFE\uFFFF 😀 end`;

/** What a reader gets back from element text: XML's characters only, line ends normalised to LF. */
const asText = (value: string) =>
  value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD').replace(/\r\n?/g, '\n');
/** ... and from an attribute: each tab, LF and CR becomes a space (attribute-value normalisation). */
const asAttribute = (value: string) => asText(value).replace(/[\t\n]/g, ' ');

t.test('a hostile value in every field of every body kind stays well-formed and reads back', async (t) => {
  const v = HOSTILE;
  const record: Snapshot = {
    ...readyRecord,
    description: v,
    hostname: v,
    upload: { performed_by: { name: v, email: v }, date: v },
    processing_messages: [v, v],
  };
  const doc = parseStrict(snapshotXml(record));
  t.equal(selectOne(doc, '/snapshot/description'), asText(v));
  t.equal(selectOne(doc, '/snapshot/upload/performed_by/name'), asText(v));
  t.same(select(doc, '/snapshot/processing_messages/message'), [asText(v), asText(v)]);

  const output: DiagnosticOutput = {
    diagnostics: {
      filter: 'all',
      hit_count: 1,
      miss_count: 0,
      diagnostic: [
        {
          name: v,
          output: [v],
          run_data: { h_importance: 'high', match: true },
          results: { h_action: v, h_name: v, h_header: v, h_summary: v, h_sols: [v], h_cve_ids: [v] },
        },
      ],
    },
    system_information: { hostname: v, chassis_serial: v, platform: v },
    version: v,
  };
  const diagnostics = parseStrict(diagnosticsXml(output));
  t.equal(selectOne(diagnostics, '//diagnostic/@name'), asAttribute(v), 'the name attribute');
  t.equal(selectOne(diagnostics, '//diagnostic//h_header'), asText(v));
  t.equal(selectOne(diagnostics, '//h_sols/url'), asText(v));

  for (const xml of [
    snapshotIdsXml({ id: [v] }),
    processingXml({ id: v, processing_status: 'PROCESSING', message: v }),
    filesXml({ file: [{ id: v, value: v }] }),
    commandsXml({ command: [{ id: v, value: v }] }),
    fileXml({ id: v, value: v, size: 1, truncated: false, content: v }),
    commandXml({ id: v, value: v, output: v }),
    errorXml({ code: 400, message: v }),
  ]) {
    const parsed = parseStrict(xml);
    t.equal(selectOne(parsed, '(//*[not(*)])[last()]'), asText(v), `${parsed.documentElement!.tagName}: the last field reads back`);
  }
});

t.test('any string, lone surrogates included, as a description and a diagnostic name stays well-formed', async (t) => {
  const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
  const markup = fc.constantFrom(
    '<',
    '>',
    '&',
    '"',
    "'",
    ']]>',
    '&amp;',
    '\r',
    '\t',
    '\n',
    '\u0000',
    '\u001f',
    '\uD800',
    '\uDC00',
    '\uFFFE',
  );
  const unit = fc.oneof(anyUnit, markup, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
  const anyString = fc.string({ unit, maxLength: 40 });
  fc.assert(
    fc.property(anyString, (value) => {
      const record = parseStrict(snapshotXml({ ...readyRecord, description: value }));
      const output = diagnosticsExample('hits');
      const named = {
        ...output,
        diagnostics: { ...output.diagnostics, diagnostic: output.diagnostics.diagnostic.map((d) => ({ ...d, name: value })) },
      };
      const diagnostics = parseStrict(diagnosticsXml(named));
      return (
        selectOne(record, '/snapshot/description') === asText(value) && selectOne(diagnostics, '//diagnostic/@name') === asAttribute(value)
      );
    }),
  );
  t.pass('no counterexample');
});

t.test('only the fields of the schema are written, in the spec order, whatever else the object carries', async (t) => {
  const withExtras = { ...readyRecord, password_hash: 'secret', account: 'a-1' } as Snapshot;
  const doc = parseStrict(snapshotXml(withExtras));
  t.same(select(doc, 'count(//password_hash | //account)'), ['0']);
  const reordered = Object.fromEntries(Object.entries(readyRecord).reverse()) as Snapshot;
  t.equal(snapshotXml(reordered), snapshotXml(readyRecord));
});

t.test('the strict reader refuses what is not well-formed, so the checks above can fail', async (t) => {
  t.throws(() => parseStrict('<error><message>a & b</message></error>'), /not well-formed/);
  t.throws(() => parseStrict('<error><message>a < b</message></error>'), /not well-formed/);
  t.throws(() => parseStrict('<error><message>a\u0001b</message></error>'), /disallowed character/);
  t.throws(() => parseStrict('<error><message>a\uD800b</message></error>'), /lone surrogate/);
  t.throws(() => parseStrict('<error><message>a]]>b</message></error>'), /not well-formed/);
  t.throws(() => parseStrict('<diagnostic name="a"b"/>'), /not well-formed/);
  t.throws(() => parseStrict('<a/><b/>'), /not well-formed/);
});
