// Formats of interface C: content negotiation and the XML, CSV and PDF bodies. Pure of HTTP: the
// handlers pick a format with `negotiate` and set `MEDIA_TYPES[format]` as the Content-Type.
export { DIAGNOSTICS_FORMATS, MEDIA_TYPES, RESOURCE_FORMATS, errorFormat, negotiate, type Format } from './negotiate.ts';
export {
  commandXml,
  commandsXml,
  diagnosticsXml,
  errorXml,
  fileXml,
  filesXml,
  processingXml,
  snapshotIdsXml,
  snapshotXml,
  xmlText,
} from './xml.ts';
export { xmlFields } from './xml-request.ts';
export { failedPage, HTML_TYPE, notFoundPage, PAGE_CSP, processingPage, snapshotPage } from './html.ts';
export { CSV_COLUMNS, csvCell, diagnosticsCsv } from './csv.ts';
export type { PdfOptions, PdfSnapshot } from './pdf.ts';

/**
 * The PDF report (pdf.ts). pdfkit is loaded with the first report, not at start: importing it costs
 * a start about 30 MB of memory, for a format only some requests ask for.
 */
export async function diagnosticsPdf(...args: Parameters<typeof import('./pdf.ts').diagnosticsPdf>): Promise<Buffer> {
  const { diagnosticsPdf: render } = await import('./pdf.ts');
  return render(...args);
}
