import { isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';
import { canonicalHeaderName } from '../src/lib/header-case.ts';
import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';

/**
 * The header names of an answer not written in their conventional case (`location` for `Location`):
 * each with the expected spelling. A name the response declares (`headers:` of the status's response) is
 * expected as the spec spells it; any other as src/lib/header-case.ts spells it. Real clients match names
 * case-sensitively (a script that greps `^Location:` misses `location:`).
 *
 * @example
 * headerCaseProblems(doc, op, 201, ['location', 'Content-Type']); // [{ name: 'location', expected: 'Location' }]
 */
export function headerCaseProblems(
  doc: OpenApiDocument,
  op: OperationEntry,
  status: number,
  rawNames: readonly string[],
): { name: string; expected: string }[] {
  const declared = declaredNames(doc, op, status);
  const problems: { name: string; expected: string }[] = [];
  for (const name of rawNames) {
    const expected = declared.get(name.toLowerCase()) ?? canonicalHeaderName(name);
    if (name !== expected) problems.push({ name, expected });
  }
  return problems;
}

/** The header names the response of `status` declares: lower case → as the spec spells it. */
function declaredNames(doc: OpenApiDocument, op: OperationEntry, status: number): Map<string, string> {
  const responses = (op.operation.responses ?? {}) as Record<string, unknown>;
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
  const headers = key ? resolveRef<{ headers?: unknown }>(doc, responses[key])?.headers : undefined;
  return new Map(isObject(headers) ? Object.keys(headers).map((name) => [name.toLowerCase(), name]) : []);
}
