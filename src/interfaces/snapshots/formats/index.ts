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
export { CSV_COLUMNS, csvCell, diagnosticsCsv } from './csv.ts';
export { IMPORTANCE_ORDER, diagnosticsPdf, type PdfOptions, type PdfSnapshot } from './pdf.ts';
