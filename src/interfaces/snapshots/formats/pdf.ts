// The PDF report of a snapshot's diagnostics (getSnapshotDiagnostics with `Accept: application/pdf`),
// drawn with PDFKit in the standard fonts (no font files). A reader sees the system, the counts, the hits
// from critical to low with what to do and where to read more (clickable links), then the misses.
import PDFDocument from 'pdfkit';
import type { Diagnostic, DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';
import { isWebLink, pdfText } from './pdf-text.ts';

type Doc = InstanceType<typeof PDFDocument>;
type Importance = Diagnostic['run_data']['h_importance'];

/** What the report says about the snapshot (from its record and manifest). */
export type PdfSnapshot = {
  id: string;
  hostname: string;
  chassisSerial: string;
  platform: string;
  version: string;
  generationDate: string;
};

export type PdfOptions = {
  /** The PDF's creation date (its metadata only). Default: the snapshot's generation date, so the same input gives the same bytes. */
  createdAt?: Date;
};

/** Most urgent first: the order of the hit sections. */
export const IMPORTANCE_ORDER: readonly Importance[] = ['critical', 'high', 'medium', 'low'];
const COLOURS: Record<Importance, string> = { critical: '#a4161a', high: '#d9480f', medium: '#9c6500', low: '#1c5d99' };
const TEXT = '#1f1f1f';
const MUTED = '#5f6368';
const LINK = '#0b57d0';
const MARGIN = 56;
const MAX_OUTPUT_LINES = 12;
/** Room for the start of a hit (header, tags, summary): less than this left on a page, it starts on the next. */
const HIT_START = 110;

/**
 * The diagnostics as a PDF report (A4): title, system, counts, the listed hits grouped by importance
 * (header, summary, action, findings, solution links, CVEs), then the listed misses, one line each; a
 * footer with the page number on every page. Deterministic: no current date is used.
 *
 * @example
 * const pdf = await diagnosticsPdf(output, { id: '1180057', hostname: 'lb1.example.com', chassisSerial: 'chs600123s',
 *   platform: 'Virtual Edition', version: '17.1.0', generationDate: '2025-11-17T08:55:02Z' });
 */
export function diagnosticsPdf(output: DiagnosticOutput, snapshot: PdfSnapshot, options: PdfOptions = {}): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    font: 'Helvetica',
    info: {
      Title: pdfText(`Diagnostics report: snapshot ${snapshot.id} (${snapshot.hostname})`),
      Author: 'Portolan',
      Creator: 'Portolan snapshot diagnostics',
      CreationDate: options.createdAt ?? dateOrEpoch(snapshot.generationDate),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  title(doc, snapshot);
  system(doc, output, snapshot);
  summary(doc, output);
  hits(doc, output);
  misses(doc, output);
  footers(doc, snapshot);
  doc.end();
  return done;
}

function dateOrEpoch(value: string): Date {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? new Date(0) : date;
}

const width = (doc: Doc) => doc.page.width - doc.page.margins.left - doc.page.margins.right;

/** Starts a new page unless `height` points are left: keeps a heading with the start of its block. */
function keepSpace(doc: Doc, height: number): void {
  if (doc.y + height > doc.page.height - doc.page.margins.bottom) doc.addPage();
}

/** A heading, on a new page unless it and `keepWith` points of what follows fit on this one. */
function heading(doc: Doc, text: string, colour = TEXT, size = 14, keepWith = 40): void {
  keepSpace(doc, size * 2 + keepWith);
  doc.moveDown(0.6).font('Helvetica-Bold').fontSize(size).fillColor(colour).text(pdfText(text), MARGIN);
  doc.moveDown(0.3).font('Helvetica').fontSize(10).fillColor(TEXT);
}

function title(doc: Doc, snapshot: PdfSnapshot): void {
  doc.font('Helvetica-Bold').fontSize(22).fillColor(TEXT).text('Diagnostics report');
  doc
    .font('Helvetica')
    .fontSize(12)
    .fillColor(MUTED)
    .text(pdfText(`Snapshot ${snapshot.id} of ${snapshot.hostname}`));
  const y = doc.y + 6;
  doc
    .moveTo(MARGIN, y)
    .lineTo(MARGIN + width(doc), y)
    .lineWidth(1)
    .strokeColor('#c4c7c5')
    .stroke();
  doc.y = y + 4;
}

function system(doc: Doc, output: DiagnosticOutput, snapshot: PdfSnapshot): void {
  heading(doc, 'System');
  const rows: [string, string][] = [
    ['Hostname', snapshot.hostname],
    ['Chassis serial', snapshot.chassisSerial],
    ['Platform', snapshot.platform],
    ['Software version', snapshot.version],
    ['Snapshot taken', snapshot.generationDate],
    ['Rule set', output.version],
  ];
  for (const [label, value] of rows) {
    const y = doc.y;
    doc.font('Helvetica-Bold').fontSize(10).fillColor(MUTED).text(label, MARGIN, y, { width: 120 });
    const afterLabel = doc.y;
    doc
      .font('Helvetica')
      .fillColor(TEXT)
      .text(pdfText(value) || '-', MARGIN + 130, y, { width: width(doc) - 130 });
    doc.y = Math.max(doc.y, afterLabel) + 2;
  }
}

function summary(doc: Doc, output: DiagnosticOutput): void {
  const { hit_count: hitCount, miss_count: missCount, filter, diagnostic } = output.diagnostics;
  heading(doc, 'Summary');
  doc
    .font('Helvetica-Bold')
    .fontSize(12)
    .fillColor(hitCount > 0 ? COLOURS.critical : TEXT);
  doc.text(`${hitCount} ${hitCount === 1 ? 'hit' : 'hits'}`, MARGIN, doc.y, { continued: true });
  doc
    .font('Helvetica')
    .fillColor(TEXT)
    .text(`, ${missCount} ${missCount === 1 ? 'check' : 'checks'} without findings`);
  const listed = diagnostic.filter((d) => d.run_data.match);
  if (filter !== 'miss') {
    const counts = IMPORTANCE_ORDER.map(
      (importance) => `${listed.filter((d) => d.run_data.h_importance === importance).length} ${importance}`,
    );
    doc
      .fontSize(10)
      .fillColor(MUTED)
      .text(`Hits by importance: ${counts.join(', ')}`);
  }
  doc
    .fontSize(10)
    .fillColor(MUTED)
    .text(`Listed: ${filter === 'all' ? 'hits and misses' : filter === 'hit' ? 'hits only' : 'misses only'} (set=${filter})`);
}

function hits(doc: Doc, output: DiagnosticOutput): void {
  const { hit_count: hitCount, filter } = output.diagnostics;
  if (hitCount === 0) {
    heading(doc, 'No issues found');
    doc.text('No check found an issue in this snapshot.', MARGIN);
    return;
  }
  if (filter === 'miss') {
    heading(doc, `Hits (${hitCount})`);
    doc.fillColor(MUTED).text('Not listed in this report (set=miss): ask for set=all or set=hit to list them.', MARGIN);
    return;
  }
  const listed = output.diagnostics.diagnostic.filter((d) => d.run_data.match);
  for (const importance of IMPORTANCE_ORDER) {
    const group = listed.filter((d) => d.run_data.h_importance === importance);
    if (group.length === 0) continue;
    heading(doc, `${importance[0]!.toUpperCase()}${importance.slice(1)} (${group.length})`, COLOURS[importance], 16, HIT_START);
    for (const diagnostic of group) hit(doc, diagnostic, COLOURS[importance]);
  }
}

function hit(doc: Doc, d: Diagnostic, colour: string): void {
  keepSpace(doc, HIT_START);
  const top = doc.y;
  doc
    .font('Helvetica-Bold')
    .fontSize(12)
    .fillColor(TEXT)
    .text(pdfText(d.results.h_header), MARGIN + 10);
  const tags = [d.name, d.run_data.h_importance, ...d.results.h_cve_ids].map((t) => pdfText(t));
  doc.font('Helvetica').fontSize(8.5).fillColor(MUTED).text(tags.join('  |  ')).moveDown(0.3);
  labelled(doc, 'Summary', d.results.h_summary);
  labelled(doc, 'Action', d.results.h_action);
  if (d.output.length > 0) {
    doc.font('Helvetica-Bold').fontSize(9.5).fillColor(TEXT).text('Found');
    const shown = d.output.slice(0, MAX_OUTPUT_LINES).map((line) => pdfText(line));
    if (d.output.length > MAX_OUTPUT_LINES) shown.push(`... and ${d.output.length - MAX_OUTPUT_LINES} more`);
    doc
      .font('Courier')
      .fontSize(8)
      .fillColor(TEXT)
      .text(shown.join('\n'), MARGIN + 20, doc.y, { width: width(doc) - 20 })
      .moveDown(0.3);
  }
  if (d.results.h_sols.length > 0) {
    doc
      .font('Helvetica-Bold')
      .fontSize(9.5)
      .fillColor(TEXT)
      .text('Solutions', MARGIN + 10);
    for (const url of d.results.h_sols) {
      const text = pdfText(url);
      const link = isWebLink(url) ? url : null;
      doc
        .font('Helvetica')
        .fontSize(9.5)
        .fillColor(link ? LINK : TEXT)
        .text(text, MARGIN + 20, doc.y, { link, underline: link !== null, width: width(doc) - 20 });
    }
  }
  // A coloured bar beside the block (on its first page when it broke over a page) marks its importance.
  if (doc.y > top) doc.rect(MARGIN, top, 3, doc.y - top).fill(colour);
  doc.fillColor(TEXT).moveDown(0.9);
}

function labelled(doc: Doc, label: string, text: string): void {
  doc
    .font('Helvetica-Bold')
    .fontSize(9.5)
    .fillColor(TEXT)
    .text(`${label}: `, MARGIN + 10, doc.y, { continued: true, width: width(doc) - 10 });
  doc
    .font('Helvetica')
    .text(pdfText(text, { multiline: true }) || '-')
    .moveDown(0.2);
}

function misses(doc: Doc, output: DiagnosticOutput): void {
  const { filter, miss_count: missCount } = output.diagnostics;
  const listed = output.diagnostics.diagnostic.filter((d) => !d.run_data.match);
  heading(doc, `Checks without findings (${missCount})`);
  if (filter === 'hit') {
    doc.fillColor(MUTED).text('Not listed in this report (set=hit): ask for set=all or set=miss to list them.', MARGIN);
    return;
  }
  for (const d of listed) {
    keepSpace(doc, 14);
    doc
      .font('Helvetica')
      .fontSize(9)
      .fillColor(MUTED)
      .text(pdfText(d.name), MARGIN, doc.y, { continued: true, width: width(doc) });
    doc.fillColor(TEXT).text(`  ${pdfText(d.results.h_header)}`);
  }
}

/** The footer of every page, written once all pages exist (`bufferPages`), below the bottom margin. */
function footers(doc: Doc, snapshot: PdfSnapshot): void {
  const { start, count } = doc.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0; // writing inside the margin must not start a new page
    const y = doc.page.height - bottom + 18;
    doc.font('Helvetica').fontSize(8).fillColor(MUTED);
    doc.text(pdfText(`Portolan diagnostics report - snapshot ${snapshot.id} - ${snapshot.hostname}`), MARGIN, y, {
      width: width(doc) - 80,
      lineBreak: false,
    });
    doc.text(`Page ${i - start + 1} of ${count}`, MARGIN, y, { width: width(doc), align: 'right', lineBreak: false });
    doc.page.margins.bottom = bottom;
  }
}
