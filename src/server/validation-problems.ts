import type { ErrorObject } from 'ajv';
import type { Problem } from '../lib/errors.ts';

/** Most problems one answer lists: an error answer never grows with the input. */
export const MAX_PROBLEMS = 20;
const MAX_SEGMENT = 64;

/** The request parts as openapi-backend's validators see them, and their names in a problem pointer. */
const PART_NAMES: Record<string, string> = { requestBody: 'body', path: 'path', query: 'query', header: 'header', cookie: 'cookie' };

/**
 * ajv errors as bounded, structured problems. Pointers are rebuilt segment by segment, each cut to 64
 * printable characters (a property name is the only request text a problem may carry); messages and
 * params come from the schema.
 */
export function toProblems(errors: readonly ErrorObject[] | null | undefined): Problem[] {
  const problems: Problem[] = [];
  for (const error of errors ?? []) {
    if (problems.length === MAX_PROBLEMS) break;
    const segments = error.instancePath.split('/').slice(1).map(unescapeSegment);
    if (segments[0] !== undefined) segments[0] = PART_NAMES[segments[0]] ?? segments[0];
    const params: Record<string, unknown> = {};
    if (error.keyword === 'enum') params.allowedValues = (error.params as { allowedValues: unknown[] }).allowedValues;
    if (error.keyword === 'required')
      params.missingProperty = bounded(String((error.params as { missingProperty: string }).missingProperty));
    // An unexpected property's name is request text (a password sent without its field name, say): it
    // is never repeated; the problem names the object that holds it.
    for (const limit of ['limit', 'format', 'type'] as const) {
      const value = (error.params as Record<string, unknown>)[limit];
      if (value !== undefined && typeof value !== 'object') params[limit] = value;
    }
    problems.push({
      pointer: segments.map((s) => `/${escapeSegment(bounded(s))}`).join(''),
      keyword: error.keyword,
      message: error.message ?? 'is invalid',
      ...(Object.keys(params).length > 0 ? { params } : {}),
    });
  }
  return problems;
}

/** `body.name must be string`, `query.limit must be >= 1`, `request must have required property 'requestBody'`. */
function describeProblem(problem: Problem): string {
  const where = problem.pointer === '' ? 'request' : problem.pointer.slice(1).split('/').map(unescapeSegment).join('.');
  const extra = problem.keyword === 'additionalProperties' ? ` (only the properties the spec lists are allowed)` : '';
  const allowed = problem.keyword === 'enum' ? ` (${((problem.params?.allowedValues as unknown[] | undefined) ?? []).join(', ')})` : '';
  return `${where} ${problem.message}${extra}${allowed}`;
}

/** The sentence of a 400: every problem, and how many more were left out. */
export function describeProblems(problems: readonly Problem[], total = problems.length): string {
  const more = total > problems.length ? `; and ${total - problems.length} more` : '';
  return `Invalid request: ${problems.map(describeProblem).join('; ')}${more}.`;
}

function bounded(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > MAX_SEGMENT ? `${clean.slice(0, MAX_SEGMENT - 3)}...` : clean;
}

// Most segments hold neither character: they are returned as they are, without a copy.
const escapeSegment = (s: string) => (s.includes('~') || s.includes('/') ? s.replaceAll('~', '~0').replaceAll('/', '~1') : s);
const unescapeSegment = (s: string) => (s.includes('~') ? s.replaceAll('~1', '/').replaceAll('~0', '~') : s);
