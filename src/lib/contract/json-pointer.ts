/** RFC 6901 helpers and local `$ref` resolution inside one OpenAPI document. */

/** A plain JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const escapeSegment = (s: string | number) => String(s).replaceAll('~', '~0').replaceAll('/', '~1');
const unescapeSegment = (s: string) => decodeURIComponent(s).replaceAll('~1', '/').replaceAll('~0', '~');

/** JSON pointer from path segments. */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${escapeSegment(s)}`).join('');
}

/** The value at a local reference (`#/components/...`) or pointer, undefined when absent. */
export function getAtPointer(doc: unknown, pointer: string): unknown {
  let node: unknown = doc;
  for (const raw of pointer.replace(/^#?\//, '').split('/')) {
    if (raw === '' && pointer.replace(/^#?\//, '') === '') break;
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[unescapeSegment(raw)] : undefined;
  }
  return node;
}

/** Follows `$ref`s (local only) until a non-reference object; undefined when one does not resolve. */
export function resolveRef<T = Record<string, unknown>>(doc: unknown, node: unknown): T | undefined {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 20) return undefined;
    current = getAtPointer(doc, current.$ref);
  }
  return current as T | undefined;
}
