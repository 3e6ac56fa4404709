// Header names in the case real clients expect. HTTP field names are case-insensitive (RFC 9110 5.1), but
// many clients are not: a script that greps `^Location:` misses `location:`. Every answer writes its names
// as the RFCs and the specs spell them: the names below as listed, any other in Title-Case.

/**
 * The names whose conventional spelling is not Title-Case (as their RFC or vendor spells them), and a
 * vendor's own lower-case name. A name a spec declares (`headers:` of a response, a header parameter, an
 * `apiKey` in a header) is spelled here as the spec spells it (src/lib/header-case.test.ts checks).
 */
const IRREGULAR = [
  'WWW-Authenticate',
  'Proxy-Authenticate',
  'ETag',
  'TE',
  'DNT',
  'NEL',
  'P3P',
  'Content-MD5',
  'Content-ID',
  'Expect-CT',
  'SourceMap',
  'X-SourceMap',
  'X-XSS-Protection',
  'X-UA-Compatible',
  'X-DNS-Prefetch-Control',
  'X-WebKit-CSP',
  'Sec-WebSocket-Key',
  'Sec-WebSocket-Accept',
  'Sec-WebSocket-Version',
  'Sec-WebSocket-Protocol',
  'Sec-WebSocket-Extensions',
  'Sec-CH-UA',
  'Sec-CH-UA-Mobile',
  'Sec-CH-UA-Platform',
  'Sec-GPC',
  // Prism's own: its documentation and clients spell it in lower case.
  'sl-violations',
];

/** Names every role writes, precomputed so the usual answer costs one map lookup per field. */
const COMMON = [
  'Accept-Ranges',
  'Access-Control-Allow-Credentials',
  'Access-Control-Allow-Headers',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Origin',
  'Access-Control-Expose-Headers',
  'Access-Control-Max-Age',
  'Age',
  'Allow',
  'Cache-Control',
  'Connection',
  'Content-Disposition',
  'Content-Encoding',
  'Content-Language',
  'Content-Length',
  'Content-Location',
  'Content-Range',
  'Content-Security-Policy',
  'Content-Type',
  'Cross-Origin-Opener-Policy',
  'Cross-Origin-Resource-Policy',
  'Date',
  'Expires',
  'Keep-Alive',
  'Last-Modified',
  'Link',
  'Location',
  'Pragma',
  'Referrer-Policy',
  'Retry-After',
  'Server',
  'Set-Cookie',
  'Strict-Transport-Security',
  'Transfer-Encoding',
  'Vary',
  'Via',
  'X-Content-Type-Options',
  'X-Frame-Options',
  'X-Request-Id',
  'X-Vendor-Auth-Token',
];

/** Every name spelled from the lists above (a proxy in front that rewrites names, such as HAProxy, needs them). */
export const LISTED_HEADER_NAMES: readonly string[] = [...IRREGULAR, ...COMMON];

/** Lower-case name → conventional spelling. */
const KNOWN = new Map<string, string>(LISTED_HEADER_NAMES.map((name) => [name.toLowerCase(), name]));

/** Names met that are in neither list, as they were given → their spelling (bounded: a name may come from a member). */
const seen = new Map<string, string>();
const SEEN_MAX = 512;

/**
 * The conventional spelling of a header name: the RFC's or vendor's for the names listed above
 * (`www-authenticate` → `WWW-Authenticate`, `etag` → `ETag`), Title-Case for any other
 * (`x-forwarded-host` → `X-Forwarded-Host`).
 *
 * @example
 * canonicalHeaderName('location'); // 'Location'
 * canonicalHeaderName('CONTENT-type'); // 'Content-Type'
 */
export function canonicalHeaderName(name: string): string {
  const known = KNOWN.get(name) ?? seen.get(name);
  if (known !== undefined) return known;
  const lower = name.toLowerCase();
  const spelled = KNOWN.get(lower) ?? titleCase(lower);
  if (seen.size < SEEN_MAX) seen.set(name, spelled);
  return spelled;
}

/** Whether a name is written as canonicalHeaderName spells it. */
export const isConventionalHeaderName = (name: string): boolean => canonicalHeaderName(name) === name;

/**
 * A flat field list (`[name, value, ...]`, as node:http's `rawHeaders`) with every name in its
 * conventional case; values and order unchanged.
 */
export function canonicalFieldList(fields: readonly string[]): string[] {
  const out = fields.slice();
  for (let i = 0; i < out.length; i += 2) out[i] = canonicalHeaderName(out[i]!);
  return out;
}

/** `x-forwarded-host` → `X-Forwarded-Host` (the input is lower case). */
function titleCase(lower: string): string {
  let out = '';
  let start = true;
  for (let i = 0; i < lower.length; i++) {
    const char = lower[i]!;
    out += start ? char.toUpperCase() : char;
    start = char === '-';
  }
  return out;
}
