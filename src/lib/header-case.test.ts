import t from 'tap';
import { isObject, resolveRef } from './contract/json-pointer.ts';
import { canonicalFieldList, canonicalHeaderName, isConventionalHeaderName } from './header-case.ts';
import { INTERFACES, loadSpec, type OpenApiDocument } from './spec-catalog.ts';

t.test('names are spelled as the RFCs spell them, Title-Case otherwise, whatever case they come in', async (t) => {
  const cases: [string, string][] = [
    ['location', 'Location'],
    ['content-type', 'Content-Type'],
    ['CONTENT-TYPE', 'Content-Type'],
    ['Content-type', 'Content-Type'],
    ['set-cookie', 'Set-Cookie'],
    ['retry-after', 'Retry-After'],
    ['www-authenticate', 'WWW-Authenticate'],
    ['Www-Authenticate', 'WWW-Authenticate'],
    ['etag', 'ETag'],
    ['content-md5', 'Content-MD5'],
    ['x-xss-protection', 'X-XSS-Protection'],
    ['sec-websocket-accept', 'Sec-WebSocket-Accept'],
    ['te', 'TE'],
    ['x-vendor-auth-token', 'X-Vendor-Auth-Token'],
    ['x-request-id', 'X-Request-Id'],
    ['access-control-allow-origin', 'Access-Control-Allow-Origin'],
    // Not in any list: Title-Case, each part after a hyphen.
    ['x-forwarded-host', 'X-Forwarded-Host'],
    ['x-chart-of-the-day', 'X-Chart-Of-The-Day'],
    ['X-CHART', 'X-Chart'],
    ['x--odd-', 'X--Odd-'],
    // Prism's own header, as its documentation spells it.
    ['SL-Violations', 'sl-violations'],
  ];
  for (const [given, expected] of cases) t.equal(canonicalHeaderName(given), expected, `${given} → ${expected}`);
  // Asked twice (the second from the cache of names met): the same answer.
  for (const [given, expected] of cases) t.equal(canonicalHeaderName(given), expected);
  for (const [, expected] of cases) t.ok(isConventionalHeaderName(expected), `${expected} is conventional`);
  t.notOk(isConventionalHeaderName('location'));
  t.notOk(isConventionalHeaderName('Etag'));
});

t.test('a field list keeps its values and order; only the names change', async (t) => {
  t.same(canonicalFieldList(['content-type', 'text/plain', 'set-cookie', 'a=1', 'Set-Cookie', 'b=2', 'x-thing', 'MiXeD']), [
    'Content-Type',
    'text/plain',
    'Set-Cookie',
    'a=1',
    'Set-Cookie',
    'b=2',
    'X-Thing',
    'MiXeD',
  ]);
});

t.test('many distinct unknown names are still spelled right past the cache bound', async (t) => {
  const wrong = Array.from({ length: 2000 }, (_, i) => `x-many-${i}-name`).filter(
    (name) => canonicalHeaderName(name) !== name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()),
  );
  t.same(wrong, []);
});

t.test(
  'every header name a spec declares is spelled the way canonicalHeaderName writes it (the spec wins: add it to the table)',
  async (t) => {
    const declared = new Map<string, string>();
    for (const { name } of INTERFACES) for (const header of declaredHeaderNames(loadSpec(name))) declared.set(header, name);
    t.ok(declared.has('Location') && declared.has('WWW-Authenticate') && declared.has('Retry-After'), 'the walk finds the specs’ headers');
    t.ok(declared.has('X-Vendor-Auth-Token'), 'and the vendor token header of the security schemes');
    const misspelt = [...declared].filter(([header]) => canonicalHeaderName(header) !== header).map(([h, spec]) => `${spec}: ${h}`);
    t.same(misspelt, [], 'no spec spells a header name otherwise');
  },
);

/** Header names of a document: responses' `headers:`, header parameters, apiKey schemes in a header. */
function declaredHeaderNames(doc: OpenApiDocument): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown, key: string, depth: number) => {
    if (depth > 40 || !isObject(node)) {
      if (Array.isArray(node)) for (const item of node) walk(item, '', depth + 1);
      return;
    }
    if (key === 'responses' || key === 'x-portolan-gateway-responses') {
      for (const response of Object.values(node)) {
        const headers = resolveRef<Record<string, unknown>>(doc, response)?.headers;
        if (isObject(headers)) for (const name of Object.keys(headers)) names.add(name);
      }
    }
    if (node.in === 'header' && typeof node.name === 'string') names.add(node.name);
    for (const [k, v] of Object.entries(node)) walk(v, k, depth + 1);
  };
  walk(doc, '', 0);
  return names;
}
