// The GUI page of a snapshot: its findings in order, every value escaped, nothing that could load or run.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { Diagnostic, DiagnosticOutput, Snapshot } from '../../../../generated/snapshots/types.gen.ts';
import { failedPage, html, notFoundPage, PAGE_CSP, processingPage, snapshotPage } from './html.ts';

const XSS = `<script>alert(1)</script><img src=x onerror="alert(2)">'&`;

const record = (over: Partial<Snapshot> = {}): Snapshot => ({
  id: '7',
  files: 'http://localhost:8300/snapshot-analyzer/api/snapshots/7/files',
  commands: 'http://localhost:8300/snapshot-analyzer/api/snapshots/7/commands',
  gui_uri: 'http://localhost:8300/snapshot-analyzer/gui/snapshots/7',
  chassis_serial: 'chs1',
  hostname: 'lb1.example.com',
  visible_in_gui: true,
  description: '',
  support_case: '',
  generation_date: '2026-01-01T00:00:00.000Z',
  upload: { performed_by: { name: 'alice', email: 'alice@users.invalid' }, date: '2026-01-01T00:00:00.000Z' },
  expiration_date: '2027-01-01T00:00:00.000Z',
  processing_status: 'COMPLETE',
  processing_messages: [],
  file_size: 10,
  file_name: 'lb1.tgz',
  diagnostics: 'http://localhost:8300/snapshot-analyzer/api/snapshots/7/diagnostics',
  ...over,
});

const diagnostic = (
  name: string,
  importance: Diagnostic['run_data']['h_importance'],
  match: boolean,
  over: Partial<Diagnostic['results']> = {},
  output: string[] = [],
): Diagnostic => ({
  name,
  output,
  run_data: { h_importance: importance, match },
  results: {
    h_action: `Fix ${name}.`,
    h_name: name,
    h_header: `Header of ${name}`,
    h_summary: `Summary of ${name}.`,
    h_sols: [],
    h_cve_ids: [],
    ...over,
  },
});

const output = (diagnostics: Diagnostic[]): DiagnosticOutput => ({
  diagnostics: {
    filter: 'all',
    hit_count: diagnostics.filter((d) => d.run_data.match).length,
    miss_count: diagnostics.filter((d) => !d.run_data.match).length,
    diagnostic: diagnostics,
  },
  system_information: { hostname: 'lb1.example.com', chassis_serial: 'chs1', platform: 'portolan-reference' },
  version: '2026.11.1',
});

t.test('html() escapes markup and quotes and replaces characters HTML cannot show', async (t) => {
  t.equal(html(`<a href="x" title='y'>&amp;</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
  t.equal(html('a\u0000b\u001bc\uD800d'), 'a\uFFFDb\uFFFDc\uFFFDd');
  t.equal(html(42), '42');
});

t.test('the page lists the hits most important first, then the misses, with the facts of the snapshot', async (t) => {
  const page = snapshotPage(
    record({ description: 'Before the upgrade' }),
    output([
      diagnostic('b-low', 'low', true),
      diagnostic('a-miss', 'high', false),
      diagnostic('c-critical', 'critical', true, { h_sols: ['https://support.example.com/k/1'] }, ['/Tenant/app/pool']),
      diagnostic('d-medium', 'medium', true),
    ]),
  );
  const order = ['Header of c-critical', 'Header of d-medium', 'Header of b-low', 'Header of a-miss'].map((h) => page.indexOf(h));
  t.ok(
    order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!)),
    'critical, medium, low hits, then the miss',
  );
  t.match(page, /<h2 id="findings">Findings: 3 of 4 diagnostics hit<\/h2>/);
  t.match(page, '1 critical, 0 high, 1 medium, 1 low.');
  t.match(page, '<a href="https://support.example.com/k/1" rel="noopener noreferrer">');
  t.match(page, '<li>/Tenant/app/pool</li>');
  t.match(page, '<dt>Description</dt><dd>Before the upgrade</dd>');
  t.match(page, '<html lang="en">', 'the language is declared (screen readers)');
  t.match(page, '<caption>Hits, most important first</caption>');
  t.notMatch(page, /hidden from the snapshot list/);
  t.match(snapshotPage(record({ visible_in_gui: false }), output([])), 'hidden from the snapshot list');
  t.match(snapshotPage(record(), output([diagnostic('a', 'low', false)])), 'No diagnostic found a problem.');
});

t.test('a hostile hostname, description, file name or finding text is text, never markup', async (t) => {
  const hostile = record({
    hostname: XSS,
    description: XSS,
    file_name: XSS,
    support_case: XSS,
    chassis_serial: XSS,
    upload: { performed_by: { name: XSS, email: 'x@users.invalid' }, date: XSS },
  });
  const pages = [
    snapshotPage(
      hostile,
      output([
        diagnostic(
          'x',
          'critical',
          true,
          {
            h_header: XSS,
            h_summary: XSS,
            h_action: XSS,
            h_sols: [`javascript:alert(3)`, `https://example.com/"><script>alert(4)</script>`],
          },
          [XSS],
        ),
      ]),
    ),
    failedPage({ ...hostile, processing_status: 'ERROR', processing_messages: [XSS] }),
    processingPage(XSS),
    notFoundPage(XSS),
  ];
  for (const page of pages) {
    t.notMatch(page, /<script/i, 'no script element');
    t.notMatch(page, /<img/i, 'no image element');
    t.notMatch(page, /href="javascript:/i, 'no javascript: link');
    t.notMatch(page, /onerror="/i, 'no event handler attribute');
    t.match(page, '&lt;script&gt;alert(1)&lt;/script&gt;', 'the text is shown, escaped');
  }
  t.match(pages[0], '<li>javascript:alert(3)</li>', 'a solution that is not an http(s) URL is text');
  t.match(pages[0], 'href="https://example.com/&quot;&gt;&lt;script&gt;alert(4)&lt;/script&gt;"', 'a URL is escaped inside its attribute');
});

t.test('the policy allows nothing to load or run but the page style, by its hash', async (t) => {
  const page = processingPage('1');
  const style = /<style>([\s\S]*?)<\/style>/.exec(page)![1]!;
  const hash = createHash('sha256').update(style).digest('base64');
  t.match(PAGE_CSP, `style-src 'sha256-${hash}'`, 'the page style is the one the policy allows');
  t.match(PAGE_CSP, /default-src 'none'/);
  t.notMatch(PAGE_CSP, /unsafe-inline|unsafe-eval|\*/);
  t.notMatch(page, /<script|<link|src=/i, 'no script, no linked asset');
  t.match(page, '<meta http-equiv="refresh" content="2">', 'a page still processing reloads itself');
});
