import type { ErrorObject } from 'ajv';

/** One schema problem: where (an ajv instancePath, relative to the validated value) and what. */
export type SchemaProblem = { instancePath: string; message: string };

const IP_ADDRESS_MESSAGE = 'should be an IPv4 or IPv6 address';
const COMBINATORS = new Set(['oneOf', 'anyOf']);

/** ajv's error in the real product's (ajv 6) words; no value of the instance is ever quoted. */
export function schemaMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `should have required property '${String(params.missingProperty)}'`;
    case 'enum':
      return 'should be equal to one of the allowed values';
    case 'const':
      return 'should be equal to constant';
    case 'type':
      return `should be ${Array.isArray(params.type) ? params.type.join(',') : String(params.type)}`;
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum':
      return `should be ${String(params.comparison)} ${String(params.limit)}`;
    case 'pattern':
      return `should match pattern "${String(params.pattern)}"`;
    case 'format':
      return `should match format "${String(params.format)}"`;
    case 'maxLength':
      return `should NOT be longer than ${String(params.limit)} characters`;
    case 'minLength':
      return `should NOT be shorter than ${String(params.limit)} characters`;
    case 'maxItems':
      return `should NOT have more than ${String(params.limit)} items`;
    case 'minItems':
      return `should NOT have fewer than ${String(params.limit)} items`;
    case 'maxProperties':
      return `should NOT have more than ${String(params.limit)} properties`;
    case 'minProperties':
      return `should NOT have fewer than ${String(params.limit)} properties`;
    case 'additionalProperties':
      return 'should NOT have additional properties';
    case 'oneOf':
      return 'should match exactly one schema in oneOf';
    case 'anyOf':
      return 'should match some schema in anyOf';
    default:
      // ajv 8 words its messages "must ..." and never quotes the instance.
      return (error.message ?? 'is invalid').replace(/^must\b/, 'should');
  }
}

/**
 * ajv's errors as the problems a user should read. A value that fails a `oneOf`/`anyOf` (a pool given
 * as a name or a reference, an address as a string, a reference or a pair) is judged by the branch of
 * its own JSON type: the other branches' "should be object" are noise. When no branch has its type the
 * problem is one "should be string,object"; the two address patterns become one "should be an IPv4 or
 * IPv6 address"; `if` failures are said by their `then`.
 */
export function schemaProblems(errors: readonly ErrorObject[]): SchemaProblem[] {
  const choicePaths = new Set(errors.filter((e) => COMBINATORS.has(e.keyword)).map((e) => e.instancePath));
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  /** Every path a problem was said at, and each of its ancestors: looked up once per combinator, so the work stays linear in the errors. */
  const saidWithin = new Set<string>();
  const add = (instancePath: string, message: string) => {
    const key = `${instancePath}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push({ instancePath, message });
    for (
      let end = instancePath.length;
      end > 0 && !saidWithin.has(instancePath.slice(0, end));
      end = instancePath.lastIndexOf('/', end - 1)
    ) {
      saidWithin.add(instancePath.slice(0, end));
    }
    saidWithin.add('');
  };
  const typesAt = new Map<string, string[]>();

  for (const error of errors) {
    const path = error.instancePath;
    if (error.keyword === 'if') continue;
    if (!choicePaths.has(path)) {
      add(path, schemaMessage(error));
      continue;
    }
    if (error.keyword === 'type') {
      const types = typesAt.get(path) ?? [];
      types.push(...[error.params.type as string | string[]].flat());
      typesAt.set(path, types);
    } else if (COMBINATORS.has(error.keyword)) {
      // Branch errors come before their combinator: when none was said, the value had no branch's type.
      if (saidWithin.has(path)) continue;
      const types = [...new Set(typesAt.get(path) ?? [])];
      add(path, types.length > 0 ? `should be ${types.join(',')}` : schemaMessage(error));
    } else if (error.keyword === 'pattern' && error.schemaPath.includes('/IpAddress/')) {
      add(path, IP_ADDRESS_MESSAGE);
    } else {
      add(path, schemaMessage(error));
    }
  }
  return problems;
}
