import t from 'tap';
import { DIAGNOSTICS_FORMATS, errorFormat, MEDIA_TYPES, negotiate, RESOURCE_FORMATS, type Format } from './negotiate.ts';

const XML = 'application/vnd.vendor.diagnostics.api+xml';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';

/** [Accept, answer for a resource (XML or JSON), answer for diagnostics (also PDF and CSV)]. */
const CASES: [string | undefined, Format | undefined, Format | undefined][] = [
  [undefined, 'xml', 'xml'],
  ['', 'xml', 'xml'],
  ['   ', 'xml', 'xml'],
  [XML, 'xml', 'xml'],
  [JSON_TYPE, 'json', 'json'],
  ['application/vnd.vendor.diagnostics.api', 'xml', 'xml'],
  ['*/*', 'xml', 'xml'],
  ['application/*', 'xml', 'xml'],
  ['APPLICATION/VND.VENDOR.DIAGNOSTICS.API+JSON', 'json', 'json'],
  [`${JSON_TYPE}; charset=utf-8`, 'json', 'json'],
  [` ${JSON_TYPE} ;q=1.0 `, 'json', 'json'],
  ['application/pdf', undefined, 'pdf'],
  ['text/csv', undefined, 'csv'],
  ['text/*', undefined, 'csv'],
  ['text/csv, */*;q=0.1', 'xml', 'csv'],
  ['application/pdf, */*', 'xml', 'pdf'],
  ['application/pdf;q=0.9, text/csv', undefined, 'csv'],
  ['text/html', undefined, undefined],
  ['application/json', undefined, undefined],
  ['application/xml', undefined, undefined],
  ['application/vnd.vendor.diagnostics.api+yaml', undefined, undefined],
  ['image/*', undefined, undefined],
  // q-values and lists
  [`application/json;q=0.5, ${JSON_TYPE}`, 'json', 'json'],
  [`${XML};q=0.4, ${JSON_TYPE};q=0.6`, 'json', 'json'],
  [`${XML};q=0.6, ${JSON_TYPE};q=0.4`, 'xml', 'xml'],
  [`${JSON_TYPE}, ${XML}`, 'json', 'json'],
  [`${XML}, ${JSON_TYPE}`, 'xml', 'xml'],
  [`*/*;q=0.1, ${JSON_TYPE}`, 'json', 'json'],
  [`application/*, ${JSON_TYPE}`, 'json', 'json'],
  // q=0 excludes, even when a wider range would accept
  [`${XML};q=0`, undefined, undefined],
  [`${XML};q=0, */*`, 'json', 'json'],
  [`*/*, ${XML};q=0, ${JSON_TYPE};q=0`, undefined, 'pdf'],
  [`${JSON_TYPE};q=0.000`, undefined, undefined],
  ['*/*;q=0', undefined, undefined],
  // malformed ranges are ignored
  [`${JSON_TYPE};q=2`, undefined, undefined],
  [`${JSON_TYPE};q=abc, ${XML};q=0.5`, 'xml', 'xml'],
  ['garbage', undefined, undefined],
  ['*/json', undefined, undefined],
  [`nonsense, ${JSON_TYPE}`, 'json', 'json'],
  ['a/b/c', undefined, undefined],
];

t.test('Accept picks XML or JSON for a resource, and also PDF or CSV for diagnostics, as the spec says', async (t) => {
  for (const [accept, resource, diagnostics] of CASES) {
    t.equal(negotiate(accept, RESOURCE_FORMATS), resource, `resource, Accept: ${JSON.stringify(accept)}`);
    t.equal(negotiate(accept, DIAGNOSTICS_FORMATS), diagnostics, `diagnostics, Accept: ${JSON.stringify(accept)}`);
  }
});

t.test('a format is chosen only when offered', async (t) => {
  t.equal(negotiate('*/*', ['json']), 'json');
  t.equal(negotiate(undefined, ['csv', 'pdf']), 'pdf');
  t.equal(negotiate(XML, []), undefined);
  t.equal(negotiate(undefined, []), undefined);
});

t.test('errors are JSON only when the Accept asks for +json, XML otherwise', async (t) => {
  t.equal(errorFormat(JSON_TYPE), 'json');
  t.equal(errorFormat(`application/json;q=0.5, ${JSON_TYPE}`), 'json');
  t.equal(errorFormat(`text/csv, ${JSON_TYPE};q=0.5`), 'json');
  for (const accept of [
    undefined,
    '',
    XML,
    '*/*',
    'application/pdf',
    'text/csv',
    'text/html',
    'application/json',
    `${JSON_TYPE};q=0`,
    `${XML}, ${JSON_TYPE}`,
  ]) {
    t.equal(errorFormat(accept), 'xml', `Accept: ${JSON.stringify(accept)}`);
  }
});

t.test('each format has the media type of the spec', async (t) => {
  t.same(MEDIA_TYPES, { xml: XML, json: JSON_TYPE, pdf: 'application/pdf', csv: 'text/csv' });
  t.ok(Object.isFrozen(MEDIA_TYPES));
});
