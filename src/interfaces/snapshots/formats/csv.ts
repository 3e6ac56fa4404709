// The CSV form of the diagnostics (getSnapshotDiagnostics with `Accept: text/csv`), written by
// csv-stringify: it quotes cells holding commas, quotes or line breaks and doubles inner quotes.
import { stringify } from 'csv-stringify/sync';
import type { Diagnostic, DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';

/** The columns of the spec's `DiagnosticReportCsv`, in order; the header row names them. */
export const CSV_COLUMNS = ['name', 'h_importance', 'match', 'h_header', 'h_summary', 'h_action', 'h_sols', 'h_cve_ids'] as const;

/**
 * A spreadsheet reads a cell that starts with one of these as a formula (or, for tab and CR, as a
 * formula once trimmed). OWASP "CSV Injection": prefix such a cell with a single quote so it is text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The cell as a spreadsheet will show it, never as a formula. */
export const csvCell = (value: string): string => (FORMULA_START.test(value) ? `'${value}` : value);

const row = (d: Diagnostic): string[] =>
  [
    d.name,
    d.run_data.h_importance,
    String(d.run_data.match),
    d.results.h_header,
    d.results.h_summary,
    d.results.h_action,
    d.results.h_sols.join(' '),
    d.results.h_cve_ids.join(' '),
  ].map(csvCell);

/**
 * The diagnostics as CSV: a header row, then one row per diagnostic listed in `output` (the `set` filter
 * has already been applied), lists joined with spaces. Lines end with CRLF (RFC 4180); no byte order mark.
 *
 * @example
 * diagnosticsCsv(output);
 * // 'name,h_importance,match,h_header,h_summary,h_action,h_sols,h_cve_ids\r\n' +
 * // 'H701231,high,true,HTTP/2 rapid reset exposure,...,https://support.example.com/articles/K000137106,CVE-2023-44487\r\n'
 */
export function diagnosticsCsv(output: DiagnosticOutput): string {
  return stringify(output.diagnostics.diagnostic.map(row), { header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' });
}
