// The snapshot's page in the GUI (the record's `gui_uri`): one self-contained HTML document per answer, no
// script, no external asset, its only style inline and allowed by its hash in the Content-Security-Policy.
// Every value is escaped: hostnames, descriptions and finding texts come from uploaded archives.
import { createHash } from 'node:crypto';
import type { Diagnostic, DiagnosticOutput, Snapshot } from '../../../../generated/snapshots/types.gen.ts';

type Importance = Diagnostic['run_data']['h_importance'];
const IMPORTANCE_ORDER: readonly Importance[] = ['critical', 'high', 'medium', 'low'];

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
header,main,footer{max-width:72rem;margin:0 auto;padding:1rem 1.5rem}
header{border-bottom:1px solid #d0d7de}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.25rem;margin:1.5rem 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%}caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid #d0d7de;padding:.4rem .6rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
thead th{background:#f3f5f7;overflow-wrap:normal}th[scope=row]{min-width:10rem}
.importance{font-weight:700;white-space:nowrap}
.critical{color:#a40e26}.high{color:#9a3412}.medium{color:#7a5400}.low{color:#1f5f99}
ul{margin:0;padding-left:1.2rem}.note{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .75rem}
a{color:#0550ae}
`;

/** The Content-Security-Policy of every page: nothing may load or run; the one inline style by its hash. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The `Content-Type` of a page. */
export const HTML_TYPE = 'text/html; charset=utf-8';

/** Characters HTML text should not carry (C0 controls but tab, LF, CR; lone surrogates; noncharacters U+FFFE, U+FFFF). */
const NOT_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uD800-\uDFFF\uFFFE\uFFFF]/gu;
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** A value as HTML text or attribute value: markup escaped, characters HTML cannot show replaced by U+FFFD. */
export const html = (value: string | number | boolean): string =>
  String(value)
    .replace(NOT_TEXT, '\uFFFD')
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** A link only to an http(s) URL (a rule's solution article); anything else stays text. */
const link = (url: string): string =>
  /^https?:\/\//i.test(url) ? `<a href="${html(url)}" rel="noopener noreferrer">${html(url)}</a>` : html(url);

const list = (items: readonly string[], render: (item: string) => string = html): string =>
  items.length === 0 ? '' : `<ul>${items.map((item) => `<li>${render(item)}</li>`).join('')}</ul>`;

function layout(title: string, heading: string, body: string, refreshSeconds?: number): string {
  const refresh = refreshSeconds === undefined ? '' : `<meta http-equiv="refresh" content="${refreshSeconds}">`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}
<title>${html(title)}</title><style>${STYLE}</style></head>
<body><header><h1>${heading}</h1></header>
<main>${body}</main>
<footer><p>Snapshot diagnostics</p></footer></body></html>
`;
}

const facts = (rows: readonly (readonly [string, string])[]): string =>
  `<dl>${rows.map(([term, value]) => `<dt>${html(term)}</dt><dd>${value}</dd>`).join('')}</dl>`;

/** The device and upload facts of a record (every value escaped). */
function about(record: Snapshot, output?: DiagnosticOutput): string {
  return facts([
    ['Hostname', html(record.hostname || 'unknown')],
    ['Chassis serial', html(record.chassis_serial || 'unknown')],
    ...(output ? ([['Platform', html(output.system_information.platform || 'unknown')]] as const) : []),
    ['Generated', html(record.generation_date)],
    ['Uploaded', `${html(record.upload.date)} by ${html(record.upload.performed_by.name)}`],
    ['Expires', html(record.expiration_date)],
    ['File', `${html(record.file_name)} (${html(record.file_size)} bytes)`],
    ['Description', html(record.description || '(none)')],
    ['Support case', html(record.support_case || '(none)')],
    ...(output ? ([['Rule set', html(output.version)]] as const) : []),
  ]);
}

const byImportance = (a: Diagnostic, b: Diagnostic) =>
  IMPORTANCE_ORDER.indexOf(a.run_data.h_importance) - IMPORTANCE_ORDER.indexOf(b.run_data.h_importance) || (a.name < b.name ? -1 : 1);

function hitRow(d: Diagnostic): string {
  const level = d.run_data.h_importance;
  return `<tr><td class="importance ${html(level)}">${html(level)}</td><th scope="row">${html(d.results.h_header)}</th><td>${html(d.results.h_summary)}</td><td>${html(d.results.h_action)}</td><td>${list(d.output)}</td><td>${list(d.results.h_sols, link)}</td></tr>`;
}

/** The name of a snapshot in a title: its id and, when known, its hostname. */
const named = (record: Snapshot) => `Snapshot ${record.id}${record.hostname ? `: ${record.hostname}` : ''}`;

/**
 * The page of a processed snapshot: its facts, then its hits (most important first: importance, finding,
 * summary, action, where, solution articles), then the diagnostics that found nothing.
 *
 * @example snapshotPage(snapshotRepresentation(base, record), output) // '<!DOCTYPE html>...'
 */
export function snapshotPage(record: Snapshot, output: DiagnosticOutput): string {
  const all = output.diagnostics.diagnostic;
  const hits = all.filter((d) => d.run_data.match).sort(byImportance);
  const misses = all.filter((d) => !d.run_data.match);
  const counts = IMPORTANCE_ORDER.map((level) => `${hits.filter((d) => d.run_data.h_importance === level).length} ${level}`).join(', ');
  const hidden = record.visible_in_gui
    ? ''
    : '<p class="note">This snapshot is hidden from the snapshot list (<code>visible_in_gui</code> is false).</p>';
  const findings =
    hits.length === 0
      ? '<p>No diagnostic found a problem.</p>'
      : `<p>${html(counts)}.</p><table><caption>Hits, most important first</caption><thead><tr><th scope="col">Importance</th><th scope="col">Finding</th><th scope="col">Summary</th><th scope="col">Action</th><th scope="col">Where</th><th scope="col">Solutions</th></tr></thead><tbody>${hits.map(hitRow).join('')}</tbody></table>`;
  const missed =
    misses.length === 0
      ? ''
      : `<section aria-labelledby="misses"><h2 id="misses">Diagnostics that found nothing (${misses.length})</h2>${list(misses.map((d) => d.results.h_header))}</section>`;
  return layout(
    `${named(record)} - diagnostics`,
    html(named(record)),
    `${hidden}<section aria-labelledby="about"><h2 id="about">Snapshot</h2>${about(record, output)}</section>
<section aria-labelledby="findings"><h2 id="findings">Findings: ${hits.length} of ${all.length} diagnostics hit</h2>${findings}</section>
${missed}`,
  );
}

/** The page of a snapshot still being processed: it reloads itself every 2 seconds. */
export const processingPage = (id: string): string =>
  layout(
    `Snapshot ${id} - processing`,
    `Snapshot ${html(id)}`,
    '<p role="status">The snapshot is being processed. This page reloads every 2 seconds until its findings are ready.</p>',
    2,
  );

/** The page of a snapshot whose processing failed: its facts and why. */
export const failedPage = (record: Snapshot): string =>
  layout(
    `${named(record)} - processing failed`,
    html(named(record)),
    `<section aria-labelledby="failed"><h2 id="failed">Processing failed</h2>${list(record.processing_messages.length ? record.processing_messages : ['no message'])}</section>
<section aria-labelledby="about"><h2 id="about">Snapshot</h2>${about(record)}</section>`,
  );

/** The page of a snapshot this account does not have. */
export const notFoundPage = (id: string): string =>
  layout(`Snapshot ${id} - not found`, 'Snapshot not found', `<p>Snapshot ${html(id)} was not found.</p>`);
