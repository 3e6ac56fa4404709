// The header names Portolan's roles write, in the case they write them: HAProxy writes every name it forwards in
// lower case unless told each name's spelling (`h1-case-adjust`), and clients that match names
// case-sensitively (a script that greps `^Location:`) would miss them behind it.
import { isObject, resolveRef } from '../lib/contract/json-pointer.ts';
import { canonicalHeaderName, LISTED_HEADER_NAMES } from '../lib/header-case.ts';
import { INTERFACES, loadSpec, type OpenApiDocument } from '../lib/spec-catalog.ts';

/**
 * Every name the roles' answers may carry that is not all lower case: the names src/lib/header-case.ts
 * spells, and every header a spec declares (responses' `headers:`, header parameters, apiKey headers), as
 * the answers spell them. Sorted, each once.
 *
 * @example responseHeaderNames().includes('WWW-Authenticate') // true
 */
export function responseHeaderNames(): string[] {
  const names = new Set(LISTED_HEADER_NAMES);
  for (const { name } of INTERFACES) for (const header of declaredHeaderNames(loadSpec(name))) names.add(canonicalHeaderName(header));
  return [...names].filter((name) => name !== name.toLowerCase()).sort();
}

function declaredHeaderNames(doc: OpenApiDocument): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown, key: string, depth: number) => {
    if (Array.isArray(node)) for (const item of node) walk(item, '', depth + 1);
    if (depth > 40 || !isObject(node)) return;
    if (key === 'responses' || key === 'x-portolan-gateway-responses')
      for (const response of Object.values(node)) {
        const headers = resolveRef<Record<string, unknown>>(doc, response)?.headers;
        if (isObject(headers)) for (const name of Object.keys(headers)) names.add(name);
      }
    if (node.in === 'header' && typeof node.name === 'string') names.add(node.name);
    for (const [k, v] of Object.entries(node)) walk(v, k, depth + 1);
  };
  walk(doc, '', 0);
  return names;
}
