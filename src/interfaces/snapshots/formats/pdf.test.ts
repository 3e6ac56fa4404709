import PDFDocument from 'pdfkit';
import t from 'tap';
import type { DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';
import type { TapTest } from '../../../lib/tap-test.ts';
import { diagnosticsPdf, IMPORTANCE_ORDER } from './pdf.ts';
import { largeOutput, REALISTIC_SNAPSHOT, realisticOutput } from './test-outputs.ts';
import { inkRatio, pdfInfo, popplerMissing, renderPage, textPages } from './test-poppler.ts';

// Fails, never skips, when poppler-utils is missing: the "done when" needs a rendered page.
const missing = popplerMissing();
/** Each test that reads a PDF with poppler starts here: a clear failure instead of a crash or a skip. */
const needsPoppler = (t: TapTest) => {
  if (missing) t.fail(missing);
  return missing === undefined;
};

/** A one-page PDF with nothing on it: the check below must find it blank. */
const blankPdf = (): Promise<Buffer> =>
  new Promise((resolve) => {
    const doc = new PDFDocument({ size: 'A4' });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.end();
  });

const INK = 0.02;

t.test('page 1 of the report of a realistic snapshot, rendered to PNG, is not blank; an empty page is', async (t) => {
  if (!needsPoppler(t)) return;
  const report = renderPage(await diagnosticsPdf(realisticOutput(), REALISTIC_SNAPSHOT), 1);
  const blank = renderPage(await blankPdf(), 1);
  t.ok(report.width > 300 && report.height > 400, `rendered ${report.width}x${report.height}`);
  t.ok(inkRatio(report) > INK, `report page 1: ${(inkRatio(report) * 100).toFixed(2)} % of the pixels are ink (> ${INK * 100} %)`);
  t.ok(inkRatio(blank) < 0.0005, `empty page: ${(inkRatio(blank) * 100).toFixed(3)} % ink`);
});

t.test('the report reads: system, counts, hits from critical to low with summary and action, then the misses', async (t) => {
  if (!needsPoppler(t)) return;
  const output = realisticOutput();
  const text = textPages(await diagnosticsPdf(output, REALISTIC_SNAPSHOT))
    .join('\n')
    .replace(/\s+/g, ' ');
  for (const fact of [
    'Diagnostics report',
    'Snapshot 1180057',
    'device-1.example.net',
    'PTL-0001-4242',
    'portolan-reference',
    '17.1.0',
    '2026-11-02T09:30:00Z',
    `Rule set ${output.version}`,
  ]) {
    t.ok(text.includes(fact), `shows ${fact}`);
  }
  const missCount = output.diagnostics.diagnostic.length - 5;
  t.ok(missCount > 25, `the shipped rule set has its misses (${missCount})`);
  t.ok(text.includes(`5 hits, ${missCount} checks without findings`), 'the hit and miss counts');
  t.ok(text.includes('Hits by importance: 2 critical, 1 high, 1 medium, 1 low'));
  const hits = output.diagnostics.diagnostic.filter((d) => d.run_data.match);
  for (const d of hits) {
    const at = text.indexOf(d.results.h_header);
    t.ok(at >= 0, `hit ${d.name}: its header`);
    t.ok(text.indexOf(d.results.h_summary.slice(0, 60), at) > at, `hit ${d.name}: its summary after the header`);
    t.ok(text.indexOf(d.results.h_action.slice(0, 60), at) > at, `hit ${d.name}: its action after the header`);
  }
  const sections = IMPORTANCE_ORDER.map((importance) => text.indexOf(`${importance[0]!.toUpperCase()}${importance.slice(1)} (`));
  t.ok(
    sections.every((at, i) => at > 0 && (i === 0 || at > sections[i - 1]!)),
    `sections critical, high, medium, low in that order (${sections})`,
  );
  const rank = (name: string) => IMPORTANCE_ORDER.indexOf(hits.find((d) => d.name === name)!.run_data.h_importance);
  const order = [...hits].sort((a, b) => text.indexOf(a.results.h_header) - text.indexOf(b.results.h_header)).map((d) => rank(d.name));
  t.same(order, [...order].sort(), 'each hit under its importance');
  const misses = text.indexOf(`Checks without findings (${missCount})`);
  t.ok(misses > Math.max(...hits.map((d) => text.indexOf(d.results.h_header))), 'the misses come after the hits');
  for (const d of output.diagnostics.diagnostic.filter((d) => !d.run_data.match))
    t.ok(text.indexOf(d.name, misses) > misses, `miss ${d.name} listed`);
});

t.test("each hit's solution links are clickable links to the solution URLs", async (t) => {
  if (!needsPoppler(t)) return;
  const output = realisticOutput();
  const { links } = pdfInfo(await diagnosticsPdf(output, REALISTIC_SNAPSHOT));
  const expected = output.diagnostics.diagnostic.filter((d) => d.run_data.match).flatMap((d) => d.results.h_sols);
  t.same([...new Set(links.map((l) => l.url))].sort(), [...new Set(expected)].sort());
});

t.test('many diagnostics break over pages: every page has content and a numbered footer, nothing is lost', async (t) => {
  if (!needsPoppler(t)) return;
  const output = largeOutput(60, 100);
  const pdf = await diagnosticsPdf(output, REALISTIC_SNAPSHOT);
  const { pages, links } = pdfInfo(pdf);
  const text = textPages(pdf);
  t.ok(pages > 5, `${pages} pages`);
  t.equal(text.length, pages);
  for (const [i, page] of text.entries()) {
    t.ok(page.includes(`Page ${i + 1} of ${pages}`), `page ${i + 1}: its footer`);
    t.ok(
      page.split('\n').filter((line) => line.trim() !== '' && !line.includes('Portolan diagnostics report')).length > 0,
      `page ${i + 1}: has content`,
    );
  }
  const all = text.join('\n');
  for (const d of output.diagnostics.diagnostic)
    t.ok(all.includes(`${d.results.h_header}\n`) || all.includes(`${d.results.h_header} `), `${d.name} is in the report`);
  t.ok(links.length >= 120, `${links.length} link annotations for 120 solution links`);
  t.ok(inkRatio(renderPage(pdf, pages, 30)) > 0.005, 'the last page is not blank either');
});

t.test('the same input gives the same bytes: no current date, the creation date is the given one', async (t) => {
  const a = await diagnosticsPdf(realisticOutput(), REALISTIC_SNAPSHOT);
  const b = await diagnosticsPdf(realisticOutput(), REALISTIC_SNAPSHOT);
  t.ok(a.equals(b), 'identical');
  t.match(a.subarray(0, 8).toString('latin1'), /^%PDF-1\.\d/);
  t.ok(a.toString('latin1').includes('(D:20261102093000Z)'), 'created at the snapshot generation date by default');
  const later = await diagnosticsPdf(realisticOutput(), REALISTIC_SNAPSHOT, { createdAt: new Date('2027-01-02T03:04:05Z') });
  t.ok(later.toString('latin1').includes('(D:20270102030405Z)'), 'or at the date passed');
});

t.test('text outside the standard fonts shows as ? and does not break the report; links only for http(s)', async (t) => {
  if (!needsPoppler(t)) return;
  const output: DiagnosticOutput = realisticOutput('hit');
  const first = output.diagnostics.diagnostic[0]!;
  first.results.h_header = 'Größe — naïve 日本 😀\u0001\uD800';
  first.results.h_sols = ['javascript:alert(1)', 'https://support.example.com/kb/ok'];
  const pdf = await diagnosticsPdf(output, { ...REALISTIC_SNAPSHOT, hostname: 'höst-名' });
  const text = textPages(pdf).join('\n');
  t.ok(text.includes('Größe — naïve ?? ?'), 'Windows-1252 text kept, the rest replaced');
  t.ok(text.includes('höst-?'));
  t.ok(text.includes('javascript:alert(1)'), 'another scheme is shown as text');
  t.notOk(
    pdfInfo(pdf).links.some((l) => l.url.startsWith('javascript:')),
    'but is not a link',
  );
});

t.test('set=hit and set=miss say what the report leaves out; no hits at all says so', async (t) => {
  if (!needsPoppler(t)) return;
  const read = async (output: DiagnosticOutput) =>
    textPages(await diagnosticsPdf(output, REALISTIC_SNAPSHOT))
      .join('\n')
      .replace(/\s+/g, ' ');
  t.ok((await read(realisticOutput('hit'))).includes('Not listed in this report (set=hit)'));
  const missText = await read(realisticOutput('miss'));
  t.ok(missText.includes('Hits (5) Not listed in this report (set=miss)'));
  t.notOk(missText.includes('A file system is full'), 'no hit shown');
  const none = largeOutput(0, 3);
  t.ok((await read(none)).includes('No issues found'));
});
