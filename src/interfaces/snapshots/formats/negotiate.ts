// Content negotiation of interface C (specs/snapshots.yaml, "Formats: the Accept header"): the Accept
// header picks XML or JSON for every resource, and also PDF or CSV for diagnostics. Pure: the handler
// passes the header's value and what the operation offers, and answers 406 when nothing fits.

/** The body formats of interface C. */
export type Format = 'xml' | 'json' | 'pdf' | 'csv';

/** The `Content-Type` of each format. */
export const MEDIA_TYPES: Readonly<Record<Format, string>> = Object.freeze({
  xml: 'application/vnd.vendor.diagnostics.api+xml',
  json: 'application/vnd.vendor.diagnostics.api+json',
  pdf: 'application/pdf',
  csv: 'text/csv',
});

/** Every resource offers these; diagnostics offer `DIAGNOSTICS_FORMATS`. */
export const RESOURCE_FORMATS: readonly Format[] = Object.freeze(['xml', 'json']);
export const DIAGNOSTICS_FORMATS: readonly Format[] = Object.freeze(['xml', 'json', 'pdf', 'csv']);

/** The bare vendor type names the latest format, which is XML (designed, after the real product). */
const LATEST = 'application/vnd.vendor.diagnostics.api';

/** The exact media types that name each format (lower case). */
const NAMES: Readonly<Record<Format, readonly string[]>> = {
  xml: [MEDIA_TYPES.xml, LATEST],
  json: [MEDIA_TYPES.json],
  pdf: [MEDIA_TYPES.pdf],
  csv: [MEDIA_TYPES.csv],
};

/** The server's preference when the client likes several formats equally (`*\/*`): XML first. */
const PREFERENCE: readonly Format[] = ['xml', 'json', 'pdf', 'csv'];

type Range = { type: string; subtype: string; q: number; order: number };
type Choice = { format: Format; q: number; specificity: number; order: number };

/**
 * The format to answer in, or `undefined` when the `Accept` header names none of `offered` (answer 406).
 * No header (or an empty one) accepts anything, so the answer is XML. Each offered format takes the
 * quality of the most specific range that matches it (RFC 9110, 12.5.1); `q=0` excludes it. Among equal
 * qualities the more specific range wins, then the earlier one in the header, then XML before JSON
 * before PDF before CSV.
 *
 * @example
 * negotiate('application/json;q=0.5, application/vnd.vendor.diagnostics.api+json', RESOURCE_FORMATS); // 'json'
 * negotiate(undefined, RESOURCE_FORMATS); // 'xml'
 * negotiate('application/pdf', RESOURCE_FORMATS); // undefined: 406
 */
export function negotiate(accept: string | undefined, offered: readonly Format[]): Format | undefined {
  const candidates = PREFERENCE.filter((format) => offered.includes(format));
  if (accept === undefined || accept.trim() === '') return candidates[0];
  const ranges = parseAccept(accept);
  let best: Choice | undefined;
  for (const format of candidates) {
    const choice = rate(format, ranges);
    if (choice && (!best || better(choice, best))) best = choice;
  }
  return best?.format;
}

/**
 * The format of an error body: JSON only when the request's `Accept` asks for the JSON vendor type (over
 * XML), XML otherwise, including when it asked for PDF, CSV or something unsupported.
 *
 * @example
 * errorFormat('application/vnd.vendor.diagnostics.api+json'); // 'json'
 * errorFormat('text/csv'); // 'xml'
 */
export function errorFormat(accept: string | undefined): 'xml' | 'json' {
  return negotiate(accept, RESOURCE_FORMATS) === 'json' ? 'json' : 'xml';
}

/** How much the client wants `format`: the most specific matching range decides, `undefined` if none or q=0. */
function rate(format: Format, ranges: readonly Range[]): Choice | undefined {
  let found: Choice | undefined;
  for (const range of ranges) {
    const specificity = matches(format, range);
    if (specificity === 0) continue;
    if (!found || specificity > found.specificity || (specificity === found.specificity && range.order < found.order)) {
      found = { format, q: range.q, specificity, order: range.order };
    }
  }
  return found && found.q > 0 ? found : undefined;
}

/** 3 for an exact type, 2 for `type/*`, 1 for `*\/*`, 0 when the range does not match `format`. */
function matches(format: Format, range: Range): number {
  if (range.type === '*' && range.subtype === '*') return 1;
  const names = NAMES[format];
  if (range.subtype === '*') return names.some((name) => name.startsWith(`${range.type}/`)) ? 2 : 0;
  return names.includes(`${range.type}/${range.subtype}`) ? 3 : 0;
}

function better(a: Choice, b: Choice): boolean {
  if (a.q !== b.q) return a.q > b.q;
  if (a.specificity !== b.specificity) return a.specificity > b.specificity;
  if (a.order !== b.order) return a.order < b.order;
  return PREFERENCE.indexOf(a.format) < PREFERENCE.indexOf(b.format);
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The media ranges of an Accept value; malformed ranges (and ranges with a malformed q) are dropped. */
function parseAccept(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const [order, part] of accept.split(',').entries()) {
    const [mediaRange = '', ...params] = part.split(';');
    const [type = '', subtype = '', ...rest] = mediaRange.trim().toLowerCase().split('/');
    if (rest.length > 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [name = '', value = ''] = param.split('=').map((s) => s.trim());
      if (name.toLowerCase() !== 'q') continue;
      if (!QVALUE.test(value)) valid = false;
      else q = Number(value);
    }
    if (valid) ranges.push({ type, subtype, q, order });
  }
  return ranges;
}
